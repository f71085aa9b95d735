/**
 * `agent_permissions.set_default` over a real WebSocket on a real SQLite
 * file: a preset (cautious / balanced / trusting) or one `{ tier, mode }`
 * moves what every agent without an override gets, an agent's own posture
 * still wins, operator connections are not agents, and only an operator may
 * move it.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openServeStore, type ServeStore } from "./serve-store.ts";
import { type RunningServer, startServer } from "./server.ts";
import { TestClient } from "../test/test-client.ts";

let carHome: string;
let store: ServeStore;
let server: RunningServer;
const clients: TestClient[] = [];

beforeAll(async () => {
  carHome = await mkdtemp(join(tmpdir(), "car-serve-default-posture-"));
  store = (await openServeStore(join(carHome, "car.db"), { CAR_HOME: carHome }))!;
  server = await startServer({ port: 0, carHome, store });
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await server.close({ graceMs: 0 });
  await store.close?.();
  await rm(carHome, { recursive: true, force: true });
});

async function open(agentId?: string): Promise<TestClient> {
  const c = await TestClient.open(agentId === undefined ? server.url : `${server.url}?agent_id=${agentId}`, server.token);
  clients.push(c);
  await c.result("session.init", { client_id: "d", tools: [{ name: "write_file" }] });
  c.handle("tools.execute", () => ({ result: "written" }));
  return c;
}

const write = (id: string) => ({ proposal: { id, actions: [{ id: "w", type: "tool_call", tool: "write_file", parameters: { path: "notes.txt" } }] } });

describe("agent_permissions.set_default", () => {
  it("a preset moves every agent without an override; the agent's own posture still wins; the operator's connection is not an agent", async () => {
    const operator = await open();
    const before = await operator.result("agent_permissions.get");
    expect(before.default).toEqual({ read_only: "always_allow", sandbox_edit: "always_allow", full_access: "require_approval" });
    const agent = await open("editor");
    expect((await agent.result("proposal.submit", write("w1"))).results[0].status).toBe("succeeded");

    const cautious = await operator.result("agent_permissions.set_default", { preset: "cautious" });
    expect(cautious.default).toEqual({ read_only: "always_allow", sandbox_edit: "require_approval", full_access: "deny" });
    const gated = await agent.result("proposal.submit", write("w2"));
    expect(gated.results[0].status).toBe("rejected");
    expect(gated.results[0].error).toContain("needs approval");
    expect(await operator.result("agent_permissions.evaluate", { agent_id: "editor", tier: "full_access" })).toEqual({
      agent_id: "editor",
      tier: "full_access",
      mode: "deny",
      has_override: false,
    });
    // The operator's own connection keeps the tier gate (postures are agents').
    expect((await operator.result("proposal.submit", write("w3"))).results[0].status).toBe("succeeded");
    // An agent with its own posture keeps it.
    await operator.result("agent_permissions.set", { agent_id: "trusted", mode: "always_allow", tier: "sandbox_edit" });
    const trusted = await open("trusted");
    expect((await trusted.result("proposal.submit", write("w4"))).results[0].status).toBe("succeeded");

    // One tier at a time.
    const one = await operator.result("agent_permissions.set_default", { tier: "sandbox_edit", mode: "always_allow" });
    expect(one.default).toEqual({ read_only: "always_allow", sandbox_edit: "always_allow", full_access: "deny" });
    expect((await agent.result("proposal.submit", write("w5"))).results[0].status).toBe("succeeded");
    const balanced = await operator.result("agent_permissions.set_default", { preset: "balanced" });
    expect(balanced.default).toEqual({ read_only: "always_allow", sandbox_edit: "require_approval", full_access: "require_approval" });
    // The default is not listed as an agent.
    expect(Object.keys(balanced.agents)).toEqual(["trusted"]);
    await operator.result("agent_permissions.set_default", { preset: "trusting" });
  });

  it("refuses a bad preset or mode, a mix of both forms, an agent's call, and an agent id with a control character", async () => {
    const operator = await open();
    for (const params of [
      { preset: "reckless" },
      { tier: "sandbox_edit", mode: "maybe" },
      { preset: "balanced", tier: "read_only" },
      {},
      { tier: "root", mode: "deny" },
    ]) {
      expect((await operator.call("agent_permissions.set_default", params)).error, JSON.stringify(params)).toMatchObject({ code: -32602 });
    }
    const agent = await open("bot");
    expect((await agent.call("agent_permissions.set_default", { preset: "trusting" })).error).toMatchObject({ code: -32001 });
    expect((await operator.call("agent_permissions.set", { agent_id: "\u001fdefault", mode: "deny" })).error).toMatchObject({ code: -32602 });
    const refused = await TestClient.connect(`${server.url}?agent_id=%1Fdefault`);
    expect((await refused.closed).code).toBe(1011);
  });

  it("an exact (agent, tool) override needs the capability, binds one literal pair, and wins over the tier posture", async () => {
    const operator = await open();
    const unnegotiated = await operator.call("agent_permissions.set_tool", { agent_id: "editor", tool: "write_file", mode: "deny" });
    expect(unnegotiated.error).toMatchObject({ code: -32008 });
    expect(unnegotiated.error!.message).toMatch(/^protocol capability mismatch/);
    const hs = await operator.result("server.handshake", { protocol_version: 3, required_capabilities: ["permissions.agent-tool-overrides.v1"] });
    expect(hs.negotiated_capabilities).toContain("permissions.agent-tool-overrides.v1");
    const policy = await operator.result("agent_permissions.set_tool", { agent_id: "editor", tool: "write_file", mode: "deny" });
    expect(policy.tool_overrides).toEqual({ editor: { write_file: { mode: "deny" } } });
    const editor = await open("editor");
    const denied = await editor.result("proposal.submit", write("t1"));
    expect(denied.results[0].status).toBe("rejected");
    expect(denied.results[0].error).toContain("denied by approval gate");
    // Another agent, and the same agent's other tools, are untouched.
    const other = await open("editor-2");
    expect((await other.result("proposal.submit", write("t2"))).results[0].status).toBe("succeeded");
    expect(await operator.result("agent_permissions.evaluate_tool", { agent_id: "editor", tool: "write_file", tier: "sandbox_edit" })).toMatchObject({
      mode: "deny",
      has_tool_override: true,
      authorization_source: "agent_tool_override",
    });
    expect((await operator.result("agent_permissions.evaluate_tool", { agent_id: "editor", tool: "read_file", tier: "read_only" })).has_tool_override).toBe(
      false,
    );
    // An exact always_allow cannot be bound to a live schema here: refused, not recorded; so is a caller's digest.
    expect((await operator.call("agent_permissions.set_tool", { agent_id: "editor", tool: "write_file", mode: "always_allow" })).error).toMatchObject({
      code: -32602,
    });
    expect(
      (await operator.call("agent_permissions.set_tool", { agent_id: "editor", tool: "write_file", mode: "deny", schema_digest: "x" })).error,
    ).toMatchObject({ code: -32602 });
    const agent = await open("editor");
    expect((await agent.call("agent_permissions.reset_tool", { agent_id: "editor", tool: "write_file" })).error).toMatchObject({ code: -32001 });
    const reset = await operator.result("agent_permissions.reset_tool", { agent_id: "editor", tool: "write_file" });
    expect(reset.tool_overrides).toBeUndefined();
    expect((await editor.result("proposal.submit", write("t3"))).results[0].status).toBe("succeeded");
  });
});
