/**
 * Per-context policy sessions (`session.policy.open` / `close`, `session_id`
 * on `policy.*` and `proposal.submit`), tenant-scoped execution (`scope` on
 * `proposal.submit`) and handler deadlines (-32004), over a real WebSocket.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { handlerDeadlineMs } from "./deadline.ts";
import { runServe } from "./serve-command.ts";
import { type RunningServer, startServer } from "./server.ts";
import { TestClient } from "../test/test-client.ts";

let carHome: string;
let server: RunningServer;
const clients: TestClient[] = [];

beforeAll(async () => {
  carHome = await mkdtemp(join(tmpdir(), "car-serve-scopes-"));
  server = await startServer({ port: 0, carHome, handlerTimeoutMs: 300 });
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await server.close({ graceMs: 0 });
  await rm(carHome, { recursive: true, force: true });
});

async function client(): Promise<TestClient> {
  const c = await TestClient.open(server.url, server.token);
  clients.push(c);
  await c.result("tools.register", [{ name: "rm" }, { name: "ls" }]);
  c.handle("tools.execute", async (p) => {
    if (p.params?.wait_ms) await new Promise((r) => setTimeout(r, p.params.wait_ms));
    return { result: { ran: p.tool } };
  });
  return c;
}

const rmProposal = (id: string) => ({ id, actions: [{ id: "a", type: "tool_call", tool: "rm", parameters: { path: "/tmp/x" } }] });

describe("policy sessions", () => {
  it("a scoped rule denies only in proposals submitted under its session, alongside the global rules", async () => {
    const c = await client();
    const { session_id } = await c.result("session.policy.open", {});
    expect(session_id).toMatch(/^psess-/);
    expect(await c.result("policy.register", { name: "no_rm", rule: "deny_tool", target: "rm", session_id })).toMatchObject({
      registered: "no_rm",
      scope: { session_id },
    });
    await c.result("policy.register", { name: "no_ls", rule: "deny_tool", target: "ls" });

    const scoped = await c.result("proposal.submit", { proposal: rmProposal("p1"), session_id });
    expect(scoped.results[0]).toMatchObject({ status: "rejected", error: expect.stringContaining("no_rm") });
    expect((await c.result("proposal.submit", { proposal: rmProposal("p2") })).results[0].status).toBe("succeeded");
    const ls = { id: "p3", actions: [{ id: "a", type: "tool_call", tool: "ls" }] };
    expect((await c.result("proposal.submit", { proposal: ls, session_id })).results[0].status).toBe("rejected");

    expect((await c.result("policy.list", { session_id })).policies).toEqual([expect.objectContaining({ name: "no_rm", owner: "session" })]);
    expect((await c.result("policy.list", {})).policies.map((p: any) => p.name)).not.toContain("no_rm");
    expect(await c.result("session.policy.close", { session_id })).toEqual({ closed: true });
    expect(await c.result("session.policy.close", { session_id })).toEqual({ closed: false });
    expect((await c.call("proposal.submit", { proposal: rmProposal("p4"), session_id })).error?.code).toBe(-32040);
  });

  it("concurrent proposals keep their own policy session; another connection cannot use the id", async () => {
    const c = await client();
    const { session_id } = await c.result("session.policy.open", {});
    await c.result("policy.register", { name: "no_rm", rule: "deny_tool", target: "rm", session_id });
    const slow = (id: string) => ({ id, actions: [{ id: "a", type: "tool_call", tool: "rm", parameters: { wait_ms: 50 } }] });
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => c.result("proposal.submit", { proposal: slow(`c${i}`), ...(i % 2 === 0 ? { session_id } : {}) })),
    );
    expect(results.map((r) => r.results[0].status)).toEqual(["rejected", "succeeded", "rejected", "succeeded", "rejected", "succeeded"]);
    const other = await client();
    expect((await other.call("proposal.submit", { proposal: rmProposal("o"), session_id })).error?.code).toBe(-32040);
    expect((await other.call("policy.register", { name: "x", rule: "deny_tool", target: "ls", session_id })).error?.code).toBe(-32040);
    expect((await c.call("session.init", { policies: [{ name: "y", rule: "deny_tool", target: "ls", session_id }] })).error?.code).toBe(-32602);
    expect(
      (await c.call("policy.register", { name: "t", rule: "trace_rule", trace: { kind: "max_calls", tool: "rm", max_calls: 1 }, session_id })).error?.code,
    ).toBe(-32602);
  });
});

describe("proposal.submit { scope: { tenantId } }", () => {
  it("runs the proposal's state in the tenant's namespace, reachable through that tenant only", async () => {
    const c = await client();
    const write = {
      id: "w",
      actions: [
        { id: "w", type: "state_write", parameters: { key: "plan", value: "alice's" } },
        { id: "r", type: "state_read", parameters: { key: "plan" }, dependencies: ["w"] },
      ],
    };
    const result = await c.result("proposal.submit", { proposal: write, scope: { tenantId: "alice" } });
    expect(result.results.map((r: any) => r.status)).toEqual(["succeeded", "succeeded"]);
    expect(await c.result("state.get", { key: "plan", tenant_id: "alice" })).toBe("alice's");
    expect(await c.result("state.get", { key: "plan" })).toBeNull();
    expect(await c.result("state.get", { key: "plan", tenant_id: "bob" })).toBeNull();
  });

  it("refuses a scoped proposal reaching another tenant's key, a run-time key, unenforced scope fields and a bad tenant id", async () => {
    const c = await client();
    await c.result("state.set", { key: "secret", value: "bob's", tenant_id: "bob" });
    const steal = { id: "s", actions: [{ id: "r", type: "state_read", parameters: { key: "tenant:bob:secret" } }] };
    const stolen = await c.call("proposal.submit", { proposal: steal, scope: { tenantId: "alice" } });
    expect(stolen.error?.code).toBe(-32001);
    expect(JSON.stringify(stolen)).not.toContain("bob's");
    const computed = {
      id: "k",
      actions: [
        { id: "a", type: "tool_call", tool: "ls" },
        { id: "w", type: "state_write", parameters: { key: "$a.output", value: 1 }, dependencies: ["a"] },
      ],
    };
    expect((await c.call("proposal.submit", { proposal: computed, scope: { tenantId: "alice" } })).error?.code).toBe(-32001);
    expect((await c.call("proposal.submit", { proposal: rmProposal("x"), scope: { tenantId: "alice", callerId: "me" } })).error?.code).toBe(-32602);
    expect((await c.call("proposal.submit", { proposal: rmProposal("y"), scope: { tenantId: "a:b" } })).error?.code).toBe(-32602);
    expect(await c.result("state.get", { key: "secret", tenant_id: "bob" })).toBe("bob's");
  });
});

describe("handler deadlines", () => {
  it("answers -32004 when a handler runs past the flat deadline", async () => {
    const c = await client();
    c.handle("multi.run_agent", async (p) => {
      await new Promise((r) => setTimeout(r, 800));
      return { result: { name: p.spec.name, answer: "late", turns: 1, tool_calls: 0, duration_ms: 800, error: null } };
    });
    const agent = { name: "slow", system_prompt: "", tools: [], max_turns: 1, metadata: {} };
    const started = Date.now();
    const reply = await c.call("multi.vote", { agents: [agent], task: "t" });
    expect(reply.error).toMatchObject({ code: -32004, message: expect.stringContaining("handler deadline exceeded: multi.vote") });
    expect(Date.now() - started).toBeLessThan(750);
  });

  it("gives proposal.submit the deadline of its own budgets, not the flat one", async () => {
    const c = await client();
    const slow = { id: "slow", actions: [{ id: "a", type: "tool_call", tool: "ls", parameters: { wait_ms: 600 }, timeout_ms: 2000 }] };
    expect((await c.result("proposal.submit", { proposal: slow })).results[0].status).toBe("succeeded");
    const deadline = handlerDeadlineMs(
      "proposal.submit",
      { proposal: { actions: [{ timeout_ms: 1000, failure_behavior: "retry", max_retries: 2 }, { failure_behavior: "retry" }, {}] } },
      99,
      5000,
    );
    expect(deadline).toBe(1000 * 3 + 5000 * 4 + 5000 + 15_000);
    expect(handlerDeadlineMs("state.get", {}, 99, 5000)).toBe(99);
  });

  it("CAR_HANDLER_TIMEOUT must be a positive number of seconds", async () => {
    const lines: string[] = [];
    const io = {
      stdout: (l: string) => lines.push(l),
      stderr: (l: string) => lines.push(l),
      env: { CAR_HOME: carHome, CAR_HANDLER_TIMEOUT: "soon" },
      onSignal: () => () => {},
    };
    expect(await runServe(["--port", "0", "--db", ":memory:"], io)).toBe(2);
    expect(lines.join("\n")).toContain("CAR_HANDLER_TIMEOUT must be a positive number of seconds");
  });
});
