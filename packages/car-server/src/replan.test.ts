/**
 * `replan.set_config` and the replan loop over a real socket: a failed run is
 * rolled back, the client's model is asked (`planner.propose`) with what
 * failed, and the replacement runs through the same admission — bounded by
 * max_replans, triggered by rejections only when asked, refused settings
 * named.
 */
import { describe, expect, it } from "vitest";
import { useTestServer } from "../test/test-client.ts";

const fx = useTestServer("car-serve-replan-");

const step = (id: string, tool: string, params: object = {}) => ({ id, type: "tool_call", tool, parameters: params });
const write = (id: string, key: string, deps: string[] = []) => ({ id, type: "state_write", parameters: { key, value: id }, dependencies: deps });

/** A client whose `flaky` tool always fails and whose other tools succeed; `propose` answers replan requests. */
async function replanClient(propose: (params: any) => unknown) {
  const c = await fx.client();
  await c.result("tools.register", [{ name: "flaky" }, { name: "steady" }, { name: "forbidden" }]);
  c.handle("tools.execute", (p) => (p.tool === "flaky" ? { result: { error: `flaky failed on ${p.params.n}` } } : { result: { ok: p.tool } }));
  c.handle("planner.propose", async (p) => ({ result: (await propose(p)) as any }));
  return c;
}

describe("replan.set_config", () => {
  it("after a failed run asks the client's model with what failed, and runs the replacement through admission", async () => {
    const c = await replanClient(() => ({ id: "plan-b", actions: [step("s", "steady"), write("w2", "done", ["s"])] }));
    expect(await c.result("replan.set_config", { max_replans: 2, delay_ms: 5, verify_before_execute: true, replan_on_rejected: false })).toBeNull();
    const result = await c.result("proposal.submit", { proposal: { id: "plan-a", actions: [write("w1", "half"), step("f", "flaky", { n: 7 })] } });
    expect(result.proposal_id).toBe("plan-b");
    expect(result.results.map((r: any) => [r.action_id, r.status])).toEqual([
      ["s", "succeeded"],
      ["w2", "succeeded"],
    ]);
    const asks = c.frames.filter((f) => f.method === "planner.propose");
    expect(asks).toHaveLength(1);
    expect(asks[0].params).toMatchObject({
      attempt: 1,
      max_attempts: 2,
      failed_proposal_id: "plan-a",
      failures: [{ action_id: "f", status: "failed", tool: "flaky", error: expect.stringContaining("flaky failed on 7"), parameters: { n: 7 } }],
      session_id: expect.any(String),
    });
    expect(asks[0].params.tools.map((t: any) => t.name)).toContain("steady");
    // The failed run was rolled back; the replacement's write landed.
    expect(await c.result("state.get", { key: "half" })).toBeNull();
    expect(await c.result("state.get", { key: "done" })).toBe("w2");
  });

  it("stops after max_replans, when the model gives up, and never replans a success", async () => {
    let asked = 0;
    const c = await replanClient(() => {
      asked++;
      return { actions: [step("again", "flaky", { n: asked })] };
    });
    await c.result("replan.set_config", { max_replans: 3 });
    const result = await c.result("proposal.submit", { proposal: { actions: [step("f", "flaky", { n: 0 })] } });
    expect(asked).toBe(3);
    expect(result.results[0]).toMatchObject({ action_id: "again", status: "failed" });
    const quitter = await replanClient(() => null);
    await quitter.result("replan.set_config", { max_replans: 3 });
    const kept = await quitter.result("proposal.submit", { proposal: { id: "only", actions: [step("f", "flaky", { n: 1 })] } });
    expect(kept.proposal_id).toBe("only");
    expect(quitter.frames.filter((f) => f.method === "planner.propose")).toHaveLength(1);
    await quitter.result("proposal.submit", { proposal: { actions: [step("s", "steady")] } });
    expect(quitter.frames.filter((f) => f.method === "planner.propose")).toHaveLength(1);
  });

  it("replans a rejection only with replan_on_rejected, and a replacement is held to the same policies", async () => {
    const c = await replanClient((p) =>
      p.attempt === 1 ? { id: "sneaky", actions: [step("x", "forbidden")] } : { id: "clean", actions: [step("s", "steady")] },
    );
    await c.result("policy.register", { name: "no-forbidden", rule: "deny_tool", target: "forbidden" });
    await c.result("replan.set_config", { max_replans: 3 });
    const rejected = await c.result("proposal.submit", { proposal: { id: "bad", actions: [step("x", "forbidden")] } });
    expect(rejected.results[0].status).toBe("rejected");
    expect(c.frames.filter((f) => f.method === "planner.propose")).toHaveLength(0);

    await c.result("replan.set_config", { max_replans: 3, replan_on_rejected: true });
    const result = await c.result("proposal.submit", { proposal: { id: "bad-2", actions: [step("x", "forbidden")] } });
    // The first replacement reached for the denied tool again and was rejected at admission; the second ran.
    expect(result.proposal_id).toBe("clean");
    const asks = c.frames.filter((f) => f.method === "planner.propose");
    expect(asks.map((f) => f.params.failed_proposal_id)).toEqual(["bad-2", "sneaky"]);
    expect(c.frames.filter((f) => f.method === "tools.execute" && f.params.tool === "forbidden")).toHaveLength(0);
  });

  it("refuses what it cannot honour with -32602 and leaves the loop off by default", async () => {
    const c = await replanClient(() => ({ actions: [] }));
    const cases: [unknown, string][] = [
      [{ max_replans: 1, verify_before_execute: false }, "verify_before_execute"],
      [{ max_replans: 100 }, "max_replans"],
      [{ max_replans: -1 }, "max_replans"],
      [{ delay_ms: 5 }, "max_replans"],
      [{ max_replans: 1, delay_ms: 3_600_000 }, "delay_ms"],
      [{ max_replans: 1, rollback_first: true }, "rollback_first"],
    ];
    for (const [params, field] of cases) {
      const reply = await c.call("replan.set_config", params);
      expect(reply.error, JSON.stringify(params)).toMatchObject({ code: -32602, data: { car_code: "invalid_params" } });
      expect(reply.error!.message, JSON.stringify(params)).toContain(field);
    }
    await c.result("proposal.submit", { proposal: { actions: [step("f", "flaky", { n: 1 })] } });
    expect(c.frames.filter((f) => f.method === "planner.propose")).toHaveLength(0);
  });
});
