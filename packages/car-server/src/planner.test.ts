import { describe, expect, it } from "vitest";
import { TestClient, useTestServer } from "../test/test-client.ts";

const fx = useTestServer("car-serve-planner-");

describe("planner.run", () => {
  it("asks the client's model for plans, feeds back verify findings and failures, and executes on the client", async () => {
    const c = await TestClient.open(fx.server.url, fx.server.token);
    fx.track(c);
    await c.result("tools.register", [{ name: "publish" }]);
    const plans = [
      { actions: [{ id: "a", type: "tool_call", tool: "not_registered" }] },
      { actions: [{ id: "a", type: "tool_call", tool: "publish", parameters: { draft: true } }] },
      { actions: [{ id: "a", type: "tool_call", tool: "publish", parameters: { draft: false } }] },
    ];
    // publish is full_access (DECISIONS §16): an operator approved both calls, so execution is what decides.
    for (const plan of plans.slice(1)) await c.result("permission.approve", { action: plan.actions[0] });
    c.handle("planner.propose", (params) => ({ result: plans[params.attempt - 1] }));
    c.handle("tools.execute", (params) =>
      params.params.draft ? { error: { code: -32000, message: "drafts cannot be published" } } : { result: { url: "https://x" } },
    );

    const out = await c.result("planner.run", { task: "publish the post", max_attempts: 3 });
    expect(out.outcome).toBe("succeeded");
    expect(out.attempts.map((a: any) => a.verdict)).toEqual(["verification_failed", "execution_failed", "succeeded"]);
    expect(out.result.results[0]).toMatchObject({ action_id: "a", status: "succeeded", output: { url: "https://x" } });
    expect(out.attempts[2].score).toMatchObject({ valid: true, estimate: { tool_calls: 1, actions: 1 } });

    const asks = c.frames.filter((f) => f.method === "planner.propose").map((f) => f.params);
    expect(asks.map((a: any) => a.feedback.length)).toEqual([0, 1, 2]);
    expect(asks[0]).toMatchObject({ task: "publish the post", attempt: 1, max_attempts: 3, target: { cost_weight: 0.2 } });
    expect(asks[0].tools.map((t: any) => t.name)).toContain("publish");
    expect(asks[2].feedback[1]).toMatchObject({ verdict: "execution_failed", failures: [{ action_id: "a", status: "failed" }] });

    const events = await c.result("events.query", { kinds: ["planner_attempt"] });
    const bySeq = [...events.events].sort((a: any, b: any) => a.seq - b.seq);
    expect(bySeq.map((e: any) => e.data.verdict)).toEqual(["verification_failed", "execution_failed", "succeeded"]);
  });

  it("bounds a model that never answers and reports it as a model error", async () => {
    const c = await TestClient.open(fx.server.url, fx.server.token);
    fx.track(c);
    c.handle("planner.propose", () => undefined);
    const out = await c.result("planner.run", { task: "t", max_attempts: 1, propose_timeout_ms: 30 });
    expect(out).toMatchObject({ outcome: "exhausted", attempts: [{ verdict: "model_error", candidates: 0 }] });
  });
});
