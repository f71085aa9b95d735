/**
 * `verify`'s evidence block and `verify.monte_carlo` over a real socket:
 * the sampler is seeded (same seed, same answer), its rates come from what
 * the session's tools really did, and a setting it cannot honour is -32602.
 */
import { describe, expect, it } from "vitest";
import { PROTOCOL } from "@car/client/protocol";
import { compileSchema, type JsonObject } from "@car/ir";
import { useTestServer } from "../test/test-client.ts";

const fx = useTestServer("car-serve-monte-carlo-");

const call = (id: string, tool: string, deps: string[] = [], effects: Record<string, unknown> = {}) => ({
  id,
  type: "tool_call",
  tool,
  parameters: {},
  dependencies: deps,
  expected_effects: effects,
});
const plan = { actions: [call("f", "fetch", [], { fetched: true }), call("d", "render", ["f"], { rendered: true })] };

function conforms(method: "verify" | "verify.monte_carlo", result: unknown): void {
  expect(compileSchema(PROTOCOL[method].result as unknown as JsonObject)(result)).toEqual({ ok: true });
}

describe("verify's evidence", () => {
  it("answers each check's scope, and param_schema runs once the session registers a schema", async () => {
    const c = await fx.client();
    const before = await c.result("verify", { proposal: plan });
    conforms("verify", before);
    const schemaCheck = (r: any) => r.evidence.checks.find((x: any) => x.name === "param_schema");
    expect(schemaCheck(before)).toMatchObject({ ran: false, findings: 0 });
    expect(before.evidence.untested_regions.join(" ")).toContain("no tools are registered");
    const params = { type: "object", properties: {}, additionalProperties: false };
    await c.result("tools.register", [
      { name: "fetch", parameters: params },
      { name: "render", parameters: params },
    ]);
    const after = await c.result("verify", { proposal: plan });
    expect(schemaCheck(after)).toMatchObject({ ran: true, findings: 0, tier: "decision_procedure" });
    expect(after.evidence.confidence).toBe(1);
    expect(after.evidence.confidence).toBeGreaterThan(before.evidence.confidence);
  });
});

describe("verify.monte_carlo", () => {
  it("derives rates from the tools' real outcomes in the log (Laplace-smoothed), merged under the caller's", async () => {
    const c = await fx.client();
    await c.result("tools.register", [{ name: "fetch" }, { name: "render" }]);
    let renders = 0;
    c.handle("tools.execute", (p) => {
      if (p.tool === "render") return ++renders % 2 === 0 ? { result: { error: "render refused" } } : { result: { ok: true } };
      return { result: { ok: true } };
    });
    for (let i = 0; i < 4; i++) await c.result("proposal.submit", { proposal: { ...plan, id: `run-${i}` } });
    const answer = await c.result("verify.monte_carlo", { proposal: plan, tool_success_rates: { fetch: 1 }, config: { trials: 400, seed: 11 } });
    conforms("verify.monte_carlo", answer);
    const byTool = Object.fromEntries(answer.rate_provenance.tools.map((t: any) => [t.tool, t]));
    expect(byTool.render).toEqual({ tool: "render", rate: (2 + 1) / (4 + 2), source: "trajectories", succeeded: 2, dispatched: 4 });
    expect(byTool.fetch).toMatchObject({ rate: 1, source: "caller", succeeded: 4, dispatched: 4 });
    expect(answer.rate_provenance).toMatchObject({ window_days: 30, trajectories_available: true, overridden_by_caller: ["fetch"] });
    expect(answer.p_all_effects_landed).toBeGreaterThan(0.35);
    expect(answer.p_all_effects_landed).toBeLessThan(0.65);
    // Nothing ran: verify.monte_carlo is static.
    expect(renders).toBe(4);
    // rate_window_days 0 reads no history: every unsupplied tool takes the default rate.
    const blind = await c.result("verify.monte_carlo", { proposal: plan, rate_window_days: 0, config: { trials: 10 } });
    expect(blind.rate_provenance.tools.map((t: any) => t.source)).toEqual(["default", "default"]);
  });

  it("gives byte-identical answers for the same seed, on any connection, and echoes the seed", async () => {
    const a = await fx.client();
    const b = await fx.client();
    const params = {
      proposal: plan,
      tool_success_rates: { fetch: 0.7, render: 0.4 },
      rate_window_days: 0,
      goal: { state_predicate: { key: "rendered", operator: "eq", value: true } },
      config: { trials: 500, seed: 2026, retry_attempts: 1 },
    };
    const first = await a.result("verify.monte_carlo", params);
    const second = await b.result("verify.monte_carlo", params);
    expect(JSON.stringify(second)).toBe(JSON.stringify(first));
    expect(first).toMatchObject({ seed: 2026, trials: 500, goal_underivable_conditions: [] });
    expect(first.p_goal_reached).toBe(first.p_all_effects_landed);
    const other = await a.result("verify.monte_carlo", { ...params, config: { ...params.config, seed: 2027 } });
    expect(other.seed).toBe(2027);
  });

  it("refuses what it cannot honour with -32602, naming it, and a malformed proposal with invalid_proposal", async () => {
    const c = await fx.client();
    const cases: [unknown, string][] = [
      [{ proposal: plan, config: { trials: 0 } }, "config.trials"],
      [{ proposal: plan, config: { samples: 3 } }, "config"],
      [{ proposal: plan, tool_success_rates: { fetch: "likely" } }, "tool_success_rates"],
      [{ proposal: plan, goal: { wish: true } }, "goal"],
      [{ proposal: plan, rate_window_days: -1 }, "rate_window_days"],
    ];
    for (const [params, field] of cases) {
      const reply = await c.call("verify.monte_carlo", params);
      expect(reply.error?.code, JSON.stringify(params)).toBe(-32602);
      expect(reply.error?.message, JSON.stringify(params)).toContain(field);
    }
    const cyclic = await c.call("verify.monte_carlo", { proposal: { actions: [call("a", "t", ["b"]), call("b", "t", ["a"])] } });
    expect(cyclic.error).toMatchObject({ code: -32602, data: { car_code: "invalid_proposal" } });
  });
});
