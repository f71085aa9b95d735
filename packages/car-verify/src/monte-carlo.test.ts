import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isCarError } from "@car/ir";
import { monteCarlo, splitMix64 } from "./index.ts";

const tool = (id: string, name: string, deps: string[] = [], effects: Record<string, unknown> = {}) => ({
  id,
  type: "tool_call",
  tool: name,
  parameters: {},
  dependencies: deps,
  expected_effects: effects,
});
/** fetch → build → deploy, each writing a key; deploy needs build's output. */
const chain = {
  actions: [tool("f", "fetch", [], { fetched: true }), tool("b", "build", ["f"], { built: true }), tool("d", "deploy", ["b"], { deployed: true })],
};

describe("verify.monte_carlo's sampler", () => {
  it("with every rate 1 lands everything; with one tool at 0 its dependants are rejected, never dispatched", () => {
    const sure = monteCarlo(chain, { toolSuccessRates: { fetch: 1, build: 1, deploy: 1 }, config: { trials: 50 } });
    expect(sure.p_all_effects_landed).toBe(1);
    expect(sure.tool_calls).toEqual({ mean: 3, min: 3, p50: 3, p95: 3, max: 3 });
    const broken = monteCarlo(chain, { toolSuccessRates: { fetch: 1, build: 0, deploy: 1 }, config: { trials: 50 } });
    expect(broken.action_outcomes).toEqual([
      { action_id: "f", p_rejected: 0, p_failed: 0, p_effects_landed: 1, mean_blast_radius: 0 },
      { action_id: "b", p_rejected: 0, p_failed: 1, p_effects_landed: 0, mean_blast_radius: 1 },
      { action_id: "d", p_rejected: 1, p_failed: 0, p_effects_landed: 0, mean_blast_radius: 0 },
    ]);
    expect(broken.actions_executed.max).toBe(2);
    expect(broken.state_distribution.map((s) => s.key)).toEqual(["fetched"]);
  });

  it("converges on the product of the rates, and retries raise success to 1-(1-p)^(n+1)", () => {
    const r = monteCarlo(chain, { toolSuccessRates: { fetch: 0.9, build: 0.8, deploy: 0.5 }, config: { trials: 20_000, seed: 7 } });
    expect(r.p_all_effects_landed).toBeCloseTo(0.36, 1);
    const single = { actions: [tool("x", "flaky")] };
    const retried = monteCarlo(single, { toolSuccessRates: { flaky: 0.5 }, config: { trials: 20_000, retry_attempts: 2 } });
    expect(retried.p_all_effects_landed).toBeCloseTo(0.875, 1);
    expect(retried.tool_calls.max).toBe(3);
  });

  it("evaluates a state_predicate goal, fails closed on what a simulation cannot decide and names it", () => {
    const goal = { all_of: [{ state_predicate: { key: "deployed", operator: "eq", value: true } }] };
    const r = monteCarlo(chain, { toolSuccessRates: { fetch: 1, build: 1, deploy: 1 }, goal, config: { trials: 10 } });
    expect(r.p_goal_reached).toBe(1);
    expect(r.goal_underivable_conditions).toEqual([]);
    const mixed = monteCarlo(chain, { goal: { any_of: [{ model_judge: { prompt: "good?" } }, "plan_achieved"] }, config: { trials: 10 } });
    expect(mixed).toMatchObject({ p_goal_reached: 0, goal_underivable_conditions: ["model_judge", "plan_achieved"] });
    expect(monteCarlo(chain, { config: { trials: 10 } }).p_goal_reached).toBeNull();
    for (const bad of [{ wish: {} }, { state_predicate: { key: "k", operator: "about" } }, "done", { all_of: {} }, 5]) {
      expect(() => monteCarlo(chain, { goal: bad as never }), JSON.stringify(bad)).toThrow(/goal/);
    }
  });

  it("says where every rate came from: the caller, the history (Laplace-smoothed) or the default", () => {
    const history = new Map([
      ["fetch", { succeeded: 1, dispatched: 1 }],
      ["build", { succeeded: 99, dispatched: 100 }],
    ]);
    const r = monteCarlo(chain, { history, windowDays: 30, toolSuccessRates: { build: 0.2 }, config: { trials: 10 } });
    expect(r.rate_provenance).toEqual({
      window_days: 30,
      trajectories_available: true,
      overridden_by_caller: ["build"],
      tools: [
        { tool: "build", rate: 0.2, source: "caller", succeeded: 99, dispatched: 100 },
        { tool: "deploy", rate: 0.5, source: "default", succeeded: null, dispatched: null },
        { tool: "fetch", rate: 2 / 3, source: "trajectories", succeeded: 1, dispatched: 1 },
      ],
    });
    expect(monteCarlo(chain, { toolSuccessRates: { fetch: 7, build: -1 }, config: { trials: 1 } }).rate_provenance.tools.map((t) => t.rate)).toEqual([
      0, 0.5, 1,
    ]);
  });

  it("refuses settings it cannot honour with invalid_params, never ignoring one", () => {
    for (const config of [
      { trials: 0 },
      { trials: 1.5 },
      { trials: 1e9 },
      { seed: -1 },
      { retry_attempts: 99 },
      { default_success_rate: "high" },
      { samples: 5 },
    ]) {
      let error: unknown;
      try {
        monteCarlo(chain, { config: config as never });
      } catch (e) {
        error = e;
      }
      expect(isCarError(error) && error.code === "invalid_params", JSON.stringify(config)).toBe(true);
    }
    expect(() => monteCarlo(chain, { toolSuccessRates: { fetch: "sure" as never } })).toThrow(/tool_success_rates.fetch/);
  });

  it("is reproducible: the same proposal, rates and seed give byte-identical answers; the seed is echoed", () => {
    fc.assert(
      fc.property(
        fc.nat({ max: Number.MAX_SAFE_INTEGER }),
        fc.record({ fetch: fc.double({ min: 0, max: 1, noNaN: true }), build: fc.double({ min: 0, max: 1, noNaN: true }) }),
        fc.integer({ min: 1, max: 200 }),
        (seed, rates, trials) => {
          const a = monteCarlo(chain, { toolSuccessRates: rates, config: { seed, trials } });
          const b = monteCarlo(JSON.parse(JSON.stringify(chain)), { toolSuccessRates: { ...rates }, config: { seed, trials } });
          expect(JSON.stringify(a)).toBe(JSON.stringify(b));
          expect(a.seed).toBe(seed);
          expect(a.trials).toBe(trials);
          for (const o of a.action_outcomes) expect(o.p_rejected + o.p_failed + o.p_effects_landed).toBeCloseTo(1, 9);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("draws a uniform stream that differs by seed", () => {
    const a = splitMix64(1);
    const b = splitMix64(2);
    const xs = Array.from({ length: 10_000 }, () => a());
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(xs.reduce((s, x) => s + x, 0) / xs.length).toBeCloseTo(0.5, 1);
    expect(b()).not.toBe(splitMix64(1)());
  });
});
