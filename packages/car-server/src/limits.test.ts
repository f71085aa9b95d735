/**
 * Every server limit, over a real socket: each refuses with its code and a
 * message naming the flag, and the connection (and every other one) keeps
 * working afterwards.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { DEFAULT_LIMITS, limitsFromFlags } from "./limits.ts";
import { type RunningServer, startServer } from "./server.ts";
import { TestClient } from "../test/test-client.ts";

let home: string;
let server: RunningServer;
const clients: TestClient[] = [];

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "car-serve-limits-"));
  server = await startServer({
    port: 0,
    carHome: home,
    limits: {
      maxRequestsPerConnection: 4,
      maxProposalsPerConnection: 2,
      maxProposalsPerServer: 3,
      maxActionsPerProposal: 3,
      maxBatchSize: 500,
      maxOutputBytesPerProposal: 1_000,
      maxInterpolatedBytesPerProposal: 1_000,
      maxToolsPerConnection: 2,
      maxPoliciesPerConnection: 2,
      maxAuthFailures: 2,
    },
  });
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await server.close({ graceMs: 0 });
  await rm(home, { recursive: true, force: true });
});

async function open(): Promise<TestClient> {
  const c = await TestClient.open(server.url, server.token);
  clients.push(c);
  return c;
}

const call = (id: string, tool: string, parameters: object = {}, extra: object = {}) => ({ id, type: "tool_call", tool, parameters, ...extra });

describe("server limits", () => {
  it("refuses a batch over --max-batch whole, and a long batch does not hold another client's call", async () => {
    const a = await open();
    const b = await open();
    a.sendRaw(JSON.stringify(Array.from({ length: 501 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "state.get", params: { key: "k" } }))));
    const refused = await a.waitFor((f) => !Array.isArray(f) && f.id === null && f.error !== undefined);
    expect(refused.error).toMatchObject({ code: -32600, message: expect.stringContaining("--max-batch") });

    const proposal = { actions: Array.from({ length: 3 }, (_, i) => ({ id: `w${i}`, type: "state_write", parameters: { key: `k${i}`, value: i } })) };
    a.sendRaw(JSON.stringify(Array.from({ length: 500 }, (_, i) => ({ jsonrpc: "2.0", id: `v${i}`, method: "verify", params: { proposal } }))));
    const order: string[] = [];
    const batch = a
      .waitFor((f) => Array.isArray(f))
      .then((replies: unknown[]) => {
        order.push("batch");
        expect(replies).toHaveLength(500);
      });
    const single = b.result("state.get", { key: "k" }).then(() => order.push("other client"));
    await Promise.all([batch, single]);
    expect(order).toEqual(["other client", "batch"]);
  });

  it("refuses more actions than --max-actions, before running any", async () => {
    const c = await open();
    const proposal = { actions: Array.from({ length: 4 }, (_, i) => ({ id: `w${i}`, type: "state_write", parameters: { key: `n${i}`, value: i } })) };
    const reply = await c.call("proposal.submit", { proposal });
    expect(reply.error).toMatchObject({ code: -32602, data: { car_code: "invalid_proposal" }, message: expect.stringContaining("--max-actions") });
    expect(await c.result("state.exists", { key: "n0" })).toBe(false);
    proposal.actions.pop();
    expect((await c.result("proposal.submit", { proposal })).results).toHaveLength(3);
  });

  it("bounds proposals in flight per connection (--max-proposals-per-connection) and per server (--max-proposals)", async () => {
    const hang: (() => void)[] = [];
    const stuck = async (c: TestClient) => {
      c.handle("tools.execute", () => new Promise((resolve) => hang.push(() => resolve({ result: "late" }))));
      await c.result("tools.register", [{ name: "slow" }]);
    };
    const a = await open();
    const b = await open();
    await stuck(a);
    await stuck(b);
    const submit = (c: TestClient, id: string) => c.call("proposal.submit", { proposal: { id, actions: [call("s", "slow")] } });
    const running = [submit(a, "p1"), submit(a, "p2")];
    await vi.waitFor(() => expect(hang).toHaveLength(2));
    expect((await submit(a, "p3")).error).toMatchObject({
      code: -32025,
      data: { car_code: "rate_limited" },
      message: expect.stringContaining("--max-proposals-per-connection"),
    });
    running.push(submit(b, "p4"));
    await vi.waitFor(() => expect(hang).toHaveLength(3));
    expect((await submit(b, "p5")).error).toMatchObject({ code: -32025, message: expect.stringContaining("--max-proposals)") });
    for (const release of hang.splice(0)) release();
    for (const r of await Promise.all(running)) expect((r.result as { results: { status: string }[] }).results[0]!.status).toBe("succeeded");
    // The slots come back once the proposals finish.
    a.handle("tools.execute", () => ({ result: 1 }));
    expect((await a.result("proposal.submit", { proposal: { actions: [call("s", "slow")] } })).results[0].status).toBe("succeeded");
  });

  it("bounds requests in flight per connection (--max-requests)", async () => {
    const c = await open();
    const hang: (() => void)[] = [];
    const output = (name: string) => ({ name, answer: "a", turns: 1, tool_calls: 0, duration_ms: 1, error: null });
    c.handle("multi.run_agent", (p) => new Promise((resolve) => hang.push(() => resolve({ result: output(p.spec.name) }))));
    const agent = { name: "slow", system_prompt: "s", tools: [], max_turns: 1, metadata: {} };
    const runs = Array.from({ length: 4 }, () => c.call("multi.pipeline", { stages: [agent], task: "t" }));
    await vi.waitFor(() => expect(hang).toHaveLength(4));
    expect((await c.call("state.get", { key: "k" })).error).toMatchObject({ code: -32025, message: expect.stringContaining("--max-requests") });
    for (const release of hang.splice(0)) release();
    for (const r of await Promise.all(runs)) expect(r.error).toBeUndefined();
    expect((await c.call("state.get", { key: "k" })).error).toBeUndefined();
  });

  it("caps the tool output one proposal keeps (--max-output-bytes): the proposal aborts and rolls back", async () => {
    const c = await open();
    c.handle("tools.execute", () => ({ result: "x".repeat(600) }));
    await c.result("tools.register", [{ name: "big" }]);
    const r = await c.result("proposal.submit", {
      proposal: {
        actions: [
          { id: "w", type: "state_write", parameters: { key: "out", value: 1 } },
          call("a", "big", {}, { dependencies: ["w"] }),
          call("b", "big", {}, { dependencies: ["a"] }),
        ],
      },
    });
    expect(r.results.map((x: { status: string }) => x.status)).toEqual(["succeeded", "succeeded", "failed"]);
    expect(r.results[2].error).toContain("--max-output-bytes");
    expect(await c.result("state.exists", { key: "out" })).toBe(false);
  });

  it("counts tool output as the bytes its frames had on the socket, not as characters", async () => {
    const c = await open();
    // 300 two-byte characters: about 650 bytes per answer frame, though each answer is only ~300 characters long.
    c.handle("tools.execute", () => ({ result: "é".repeat(300) }));
    await c.result("tools.register", [{ name: "wide" }]);
    const r = await c.result("proposal.submit", {
      proposal: { actions: [call("a", "wide"), call("b", "wide", {}, { dependencies: ["a"] })] },
    });
    expect(r.results.map((x: { status: string }) => x.status)).toEqual(["succeeded", "failed"]);
    expect(r.results[1].error).toMatch(/reached (\d+) bytes/);
    const counted = Number(/reached (\d+) bytes/.exec(r.results[1].error)![1]);
    expect(counted).toBeGreaterThan(2 * 600);
  });

  it("caps the bytes references interpolate into one proposal (--max-interpolated-bytes)", async () => {
    const c = await open();
    const seen: unknown[] = [];
    c.handle("tools.execute", (p) => {
      seen.push(p.params);
      return { result: "y".repeat(400) };
    });
    await c.result("tools.register", [{ name: "t" }]);
    const r = await c.result("proposal.submit", {
      proposal: {
        actions: [
          call("a", "t"),
          call("b", "t", { v: ["$a.output", "$a.output"] }, { dependencies: ["a"] }),
          call("c", "t", { v: "$a.output" }, { dependencies: ["b"] }),
        ],
      },
    });
    expect(r.results.map((x: { status: string }) => x.status)).toEqual(["succeeded", "succeeded", "rejected"]);
    expect(r.results[2].error).toContain("over the 1000-byte limit");
    expect(seen).toHaveLength(2);
  });

  it("bounds tools and policies per connection (--max-tools, --max-policies); unregistering makes room", async () => {
    const c = await open();
    await c.result("tools.register", [{ name: "t1", parameters: { type: "object" } }, { name: "t2" }]);
    expect(await c.result("tools.register", [{ name: "t2", description: "re-registered" }])).toBe(1);
    const over = await c.call("tools.register", [{ name: "t3" }]);
    expect(over.error).toMatchObject({ code: -32026, data: { car_code: "budget_exceeded" }, message: expect.stringContaining("--max-tools") });
    await c.result("tools.unregister", { name: "t1" });
    expect(await c.result("tools.register", [{ name: "t3" }])).toBe(1);

    await c.result("policy.register", { name: "p", rule: "deny_tool", target: "x" });
    await c.result("policy.register", { name: "p", rule: "deny_tool", target: "y" });
    expect((await c.call("session.init", { policies: [{ name: "q", rule: "deny_tool", target: "z" }] })).error).toMatchObject({ code: -32026 });
    expect(await c.result("policy.unregister", { name: "p" })).toMatchObject({ removed: 2 });
    await c.result("policy.register", { name: "q", rule: "deny_tool", target: "z" });
  });

  it("closes a connection after --max-auth-failures wrong tokens", async () => {
    const c = await TestClient.connect(server.url);
    clients.push(c);
    expect((await c.call("session.auth", { token: "wrong" })).error?.message).toContain("token mismatch");
    expect((await c.call("session.auth", { token: "wrong again" })).error?.message).toContain("token mismatch");
    expect(await c.closed).toMatchObject({ code: 1008, reason: expect.stringContaining("session.auth") });
  });
});

describe("limit flags", () => {
  it("reads positive integers and refuses anything else, naming the flag", () => {
    expect(limitsFromFlags({ "max-batch": "10", "max-tools": "7" })).toEqual({ maxBatchSize: 10, maxToolsPerConnection: 7 });
    expect(() => limitsFromFlags({ "max-batch": "0" })).toThrow(/--max-batch must be a positive integer/);
    expect(() => limitsFromFlags({ "max-output-bytes": "1e6" })).toThrow(/--max-output-bytes/);
    expect(Object.values(DEFAULT_LIMITS).every((v) => Number.isSafeInteger(v) && v > 0)).toBe(true);
  });
});
