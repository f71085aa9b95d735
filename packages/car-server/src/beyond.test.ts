/**
 * Over a real WebSocket: trace rules registered with `policy.register` are
 * enforced on `proposal.submit` and checked by `verify`; `rollback:
 * "compensate"` runs the compensations through the client's `tools.execute`.
 */
import { describe, expect, it } from "vitest";
import { type TestClient, useTestServer } from "../test/test-client.ts";

const fx = useTestServer("car-serve-beyond-");
const client = (): Promise<TestClient> => fx.client();

describe("trace rules and compensation over the WebSocket", () => {
  it("registers a trace rule, lists it, denies with its name, and verify reports the unordered plan", async () => {
    const c = await client();
    await c.result("session.init", { client_id: "t", tools: [{ name: "run_tests" }, { name: "deploy" }] });
    c.handle("tools.execute", () => ({ result: { ok: true } }));
    expect(
      await c.result("policy.register", { name: "tests_first", rule: "trace_rule", trace: { kind: "only_after", tool: "deploy", after: "run_tests" } }),
    ).toMatchObject({ registered: "tests_first" });
    expect((await c.result("policy.list", {})).policies).toContainEqual({
      name: "tests_first",
      description: 'trace_rule: {"kind":"only_after","tool":"deploy","after":"run_tests"}',
      owner: "session",
      read_only: false,
    });
    const bad = {
      actions: [
        { id: "d", type: "tool_call", tool: "deploy" },
        { id: "t", type: "tool_call", tool: "run_tests" },
      ],
    };
    const verified = await c.result("verify", { proposal: bad });
    expect(verified.issues.map((i: { message: string }) => i.message)).toContainEqual(
      expect.stringContaining("tests_first: the DAG permits 'd' to run before any 'run_tests' succeeded"),
    );
    // deploy is full_access (DECISIONS §16): approved, so the trace rule is what decides.
    await c.result("permission.approve", { action: bad.actions[0] });
    const result = await c.result("proposal.submit", { proposal: bad });
    expect(result.results[0]).toMatchObject({ status: "rejected", error: expect.stringMatching(/^denied by policy: tests_first: /) });
    const malformed = await c.call("policy.register", { name: "x", rule: "trace_rule", trace: { kind: "sometimes", tool: "deploy" } });
    expect(malformed.error?.code).toBe(-32602);
    expect(malformed.error?.message).toContain("trace.kind must be one of");
    expect(await c.result("policy.unregister", { name: "tests_first" })).toMatchObject({ removed: 1 });
    expect((await c.result("proposal.submit", { proposal: { ...bad, id: "again" } })).results[0].status).toBe("succeeded");
  });

  it("proposal.submit with rollback: compensate runs the compensation through tools.execute", async () => {
    const c = await client();
    await c.result("session.init", { client_id: "t", tools: [{ name: "create_row" }, { name: "delete_row" }, { name: "boom" }] });
    const calls: string[] = [];
    c.handle("tools.execute", (params) => {
      calls.push(`${params.tool} ${JSON.stringify(params.params)}`);
      if (params.tool === "boom") return { error: { code: -32021, message: "exploded" } };
      return { result: { id: 7 } };
    });
    const proposal = {
      id: "saga",
      actions: [
        {
          id: "c",
          type: "tool_call",
          tool: "create_row",
          reversibility: "compensable",
          compensation: { type: "tool", tool: "delete_row", parameters: { id: 7 } },
        },
        { id: "b", type: "tool_call", tool: "boom", dependencies: ["c"] },
      ],
    };
    const result = await c.result("proposal.submit", { proposal, rollback: "compensate" });
    expect(calls).toEqual(["create_row {}", "boom {}", 'delete_row {"id":7}']);
    expect(result.results[0]).toMatchObject({ rolled_back: true, compensated: true });
    expect((await c.call("proposal.submit", { proposal: { ...proposal, id: "x" }, rollback: "maybe" })).error?.code).toBe(-32602);
  });
});
