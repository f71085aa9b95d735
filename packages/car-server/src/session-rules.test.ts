/**
 * DECISIONS.md §19 over the wire: the operator's file rules are read-only to
 * every session, and a session lists and removes only what it registered.
 * Every policy method is tried from an operator connection and from an
 * agent connection (`?agent_id=`).
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "./server.ts";
import { TestClient } from "../test/test-client.ts";

const OPERATOR_FILE = `
deny_keyword = ["rm -rf /"]

[[deny_tool_param]]
tool = "http_request"
param = "url"
contains = "169.254.169.254"
`;

let home: string;
let server: RunningServer;
const clients: TestClient[] = [];

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "car-serve-rules-"));
  await mkdir(join(home, "policies"));
  await writeFile(join(home, "policies", "ops.toml"), OPERATOR_FILE);
  server = await startServer({ port: 0, carHome: home });
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await server.close({ graceMs: 0 });
  await rm(home, { recursive: true, force: true });
});

async function open(agent: boolean): Promise<TestClient> {
  const c = await TestClient.open(agent ? `${server.url}?agent_id=agent-7` : server.url, server.token);
  clients.push(c);
  c.handle("tools.execute", () => ({ result: { ran: true } }));
  await c.result("tools.register", [{ name: "http_request" }, { name: "shell" }]);
  return c;
}

const metadataCall = { id: "m", type: "tool_call", tool: "http_request", parameters: { url: "http://169.254.169.254/latest/meta-data" } };
const rmCall = { id: "r", type: "tool_call", tool: "shell", parameters: { command: "rm -rf /" } };

async function statusOf(c: TestClient, action: object): Promise<string> {
  const r = await c.result("proposal.submit", { proposal: { actions: [action] } });
  return r.results[0].status;
}

describe.each([
  ["an operator connection", false],
  ["an agent connection", true],
])("policy methods from %s", (_label, agent) => {
  it("policy.list shows the operator's rules read-only", async () => {
    const c = await open(agent);
    const listed = await c.result("policy.list");
    expect(listed.policies.length).toBeGreaterThanOrEqual(2);
    for (const rule of listed.policies) expect(rule).toMatchObject({ owner: "operator", read_only: true });
  });

  it("policy.unregister cannot remove an operator rule, by any name policy.list hands out", async () => {
    const c = await open(agent);
    const names: string[] = (await c.result("policy.list")).policies.map((p: { name: string }) => p.name);
    for (const name of names) {
      const reply = await c.call("policy.unregister", { name });
      expect(reply.error).toMatchObject({ code: -32001, data: { car_code: "unauthorized" } });
      expect(reply.error?.message).toContain("operator rule");
    }
    expect((await c.result("policy.list")).policies.map((p: { name: string }) => p.name)).toEqual(names);
    // The rules still hold.
    expect(await statusOf(c, metadataCall)).toBe("rejected");
    expect(await statusOf(c, rmCall)).toBe("rejected");
  });

  it("policy.register and session.init cannot shadow an operator rule's name", async () => {
    const c = await open(agent);
    const [first] = (await c.result("policy.list")).policies;
    const shadow = { name: first.name, rule: "deny_tool", target: "nothing" };
    const direct = await c.call("policy.register", shadow);
    expect(direct.error).toMatchObject({ code: -32602, data: { car_code: "invalid_params" } });
    expect(direct.error?.message).toContain("belongs to an operator rule");
    const batch = await c.call("session.init", { policies: [{ name: "fine", rule: "deny_tool", target: "x" }, shadow] });
    expect(batch.error?.code).toBe(-32602);
    // All-or-nothing: the good entry of the refused batch is not registered either.
    expect((await c.result("policy.list")).policies.every((p: { owner: string }) => p.owner === "operator")).toBe(true);
    expect(await statusOf(c, metadataCall)).toBe("rejected");
  });

  it("a session registers, lists and removes its own rules only", async () => {
    const c = await open(agent);
    const other = await open(agent);
    await c.result("policy.register", { name: "no_shell", rule: "deny_tool", target: "shell" });
    await c.result("session.init", { policies: [{ name: "no_ls", rule: "deny_tool_param", target: "shell", key: "command", pattern: "ls" }] });
    const listed = (await c.result("policy.list")).policies;
    expect(listed.filter((p: { owner: string }) => p.owner === "session")).toEqual([
      { name: "no_shell", description: "deny_tool: target=shell", owner: "session", read_only: false },
      { name: "no_ls", description: 'deny_tool_param: target=shell, key=command, pattern="ls"', owner: "session", read_only: false },
    ]);
    // Another connection neither sees nor removes them.
    expect((await other.result("policy.list")).policies.some((p: { owner: string }) => p.owner === "session")).toBe(false);
    expect(await other.result("policy.unregister", { name: "no_shell" })).toMatchObject({ removed: 0 });
    expect(await statusOf(c, { id: "s", type: "tool_call", tool: "shell", parameters: { command: "echo" } })).toBe("rejected");

    expect(await c.result("policy.unregister", { name: "no_shell" })).toEqual({ unregistered: "no_shell", removed: 1, scope: "global" });
    expect(await c.result("policy.unregister", { name: "no_shell" })).toMatchObject({ removed: 0 });
    expect(await statusOf(c, { id: "s", type: "tool_call", tool: "shell", parameters: { command: "echo" } })).toBe("succeeded");
    // Removing its own rules never loosened the operator's.
    expect(await statusOf(c, rmCall)).toBe("rejected");
  });

  it("permission.classify answers and leaves every rule in force", async () => {
    const c = await open(agent);
    const before = await c.result("policy.list");
    const classified = await c.result("permission.classify", { proposal: { actions: [rmCall] } });
    expect(classified.classifications[0]).toMatchObject({ action_id: "r", tool: "shell" });
    expect(await c.result("policy.list")).toEqual(before);
  });
});
