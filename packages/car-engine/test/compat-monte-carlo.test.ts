/**
 * `simulateMonteCarlo` in node-api.md's call form: JSON text in and out, the
 * same function as `verify.monte_carlo` (`@car/verify`'s `monteCarlo`), and a
 * typed CarError for every bad argument.
 */
import { isCarError } from "@car/ir";
import { MAX_TRIALS, monteCarlo } from "@car/verify";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { simulateMonteCarlo } from "../src/compat/index.ts";

/** fetch → store: store consumes fetch's output, so a failed fetch rejects it before dispatch. */
const plan = {
  id: "mc",
  actions: [
    { id: "fetch", type: "tool_call", tool: "fetch", parameters: {}, expected_effects: { page: "body" } },
    { id: "store", type: "state_write", parameters: { key: "saved", value: true }, state_dependencies: ["page"], dependencies: ["fetch"] },
  ],
};
const planJson = JSON.stringify(plan);
const goalJson = JSON.stringify({ state_predicate: { key: "saved", operator: "eq", value: true } });

describe("simulateMonteCarlo", () => {
  it("answers the same bytes for the same seed, the answer monteCarlo gives, and another for another seed", () => {
    const config = { trials: 300, seed: 42 };
    const first = simulateMonteCarlo(planJson, null, JSON.stringify({ fetch: 0.5 }), goalJson, JSON.stringify(config));
    const again = simulateMonteCarlo(planJson, null, JSON.stringify({ fetch: 0.5 }), goalJson, JSON.stringify(config));
    expect(again).toBe(first);
    expect(first).toBe(JSON.stringify(monteCarlo(plan, { toolSuccessRates: { fetch: 0.5 }, goal: JSON.parse(goalJson), config })));
    const other = simulateMonteCarlo(planJson, null, JSON.stringify({ fetch: 0.5 }), goalJson, JSON.stringify({ ...config, seed: 43 }));
    expect(other).not.toBe(first);
    const answer = JSON.parse(first);
    expect(answer.seed).toBe(42);
    expect(answer.trials).toBe(300);
    // A 0.5 coin over 300 trials: near half, never all or none.
    expect(answer.p_goal_reached).toBeGreaterThan(0.3);
    expect(answer.p_goal_reached).toBeLessThan(0.7);
  });

  it("cascades a failed tool to its dependant and reads node-api.md's result fields", () => {
    const never = JSON.parse(simulateMonteCarlo(planJson, "{}", JSON.stringify({ fetch: 0 }), goalJson, JSON.stringify({ trials: 20 })));
    expect(never.p_goal_reached).toBe(0);
    expect(never.p_all_effects_landed).toBe(0);
    const store = never.action_outcomes.find((o: { action_id: string }) => o.action_id === "store");
    expect(store.p_rejected).toBe(1);
    const fetch = never.action_outcomes.find((o: { action_id: string }) => o.action_id === "fetch");
    expect(fetch).toMatchObject({ p_failed: 1, mean_blast_radius: 1 });
    const always = JSON.parse(simulateMonteCarlo(planJson, null, JSON.stringify({ fetch: 1 }), goalJson, JSON.stringify({ trials: 20 })));
    expect(always.p_goal_reached).toBe(1);
    expect(always.state_distribution.find((d: { key: string }) => d.key === "saved")).toEqual({
      key: "saved",
      p_present: 1,
      values: [{ value: true, probability: 1 }],
    });
    expect(Object.keys(always.tool_calls).sort()).toEqual(["max", "mean", "min", "p50", "p95"]);
    // Without a log, the rate the caller did not give is the default, and the answer says where each came from.
    const defaulted = JSON.parse(simulateMonteCarlo(planJson, null, null, null, JSON.stringify({ trials: 5, default_success_rate: 1 })));
    expect(defaulted.p_goal_reached).toBeNull();
    expect(defaulted.rate_provenance.tools).toEqual([{ tool: "fetch", rate: 1, source: "default", succeeded: null, dispatched: null }]);
  });

  it("names the bad argument in an invalid_params (a malformed plan is invalid_proposal)", () => {
    const cases: [unknown[], string, RegExp][] = [
      [[42], "invalid_params", /proposalJson must be a JSON string/],
      [["{"], "invalid_params", /proposalJson is not valid JSON/],
      [['{"actions":[{}]}'], "invalid_proposal", /./],
      [[planJson, "[]"], "invalid_params", /initialStateJson must be a JSON object/],
      [[planJson, null, '{"fetch":"high"}'], "invalid_params", /tool_success_rates\.fetch must be a number/],
      [[planJson, null, null, '"sometimes"'], "invalid_params", /unknown goal condition/],
      [[planJson, null, null, null, '{"trials":0}'], "invalid_params", /config\.trials must be an integer/],
      [[planJson, null, null, null, JSON.stringify({ trials: MAX_TRIALS + 1 })], "invalid_params", /config\.trials/],
      [[planJson, null, null, null, '{"defaultSuccessRate":1}'], "invalid_params", /config\.defaultSuccessRate is not a Monte Carlo setting/],
    ];
    for (const [args, code, message] of cases) {
      let error: unknown;
      try {
        (simulateMonteCarlo as (...a: unknown[]) => string)(...args);
      } catch (e) {
        error = e;
      }
      expect(isCarError(error, code as "invalid_params"), `${JSON.stringify(args)} → ${String(error)}`).toBe(true);
      expect((error as Error).message).toMatch(message);
    }
  });

  it("answers any state, rates, goal and config either with a result or a CarError (fast-check)", () => {
    const smallInt = fc.integer({ min: -3, max: 40 });
    const field = fc.oneof(smallInt, fc.double(), fc.string({ maxLength: 4 }), fc.constant(null), fc.constant(MAX_TRIALS + 1));
    const config = fc.record(
      { trials: field, seed: fc.oneof(field, fc.constant(Number.MAX_SAFE_INTEGER)), default_success_rate: field, retry_attempts: field },
      { requiredKeys: [] },
    );
    const text = <T>(arb: fc.Arbitrary<T>) =>
      fc.oneof(
        arb.map((v) => JSON.stringify(v)),
        fc.constant(null),
        fc.string({ maxLength: 6 }),
      );
    const goal = fc.oneof(
      fc.jsonValue({ maxDepth: 2 }),
      fc.record({
        state_predicate: fc.record({
          key: fc.string({ maxLength: 4 }),
          operator: fc.constantFrom("eq", "gt", "exists", "nope"),
          value: fc.jsonValue({ maxDepth: 1 }),
        }),
      }),
      fc.constantFrom("plan_achieved", "model_judge"),
    );
    const rates = fc.dictionary(fc.constantFrom("fetch", "other", "__proto__"), field, { maxKeys: 2 });
    fc.assert(
      fc.property(text(fc.jsonValue({ maxDepth: 2 })), text(rates), text(goal), text(config), (state, toolRates, goalText, configText) => {
        let answer: string;
        try {
          answer = simulateMonteCarlo(planJson, state, toolRates, goalText, configText);
        } catch (error) {
          expect(isCarError(error), String(error)).toBe(true);
          return;
        }
        const parsed = JSON.parse(answer) as { trials: number; p_all_effects_landed: number };
        expect(parsed.trials).toBeGreaterThanOrEqual(1);
        expect(parsed.p_all_effects_landed).toBeGreaterThanOrEqual(0);
        expect(parsed.p_all_effects_landed).toBeLessThanOrEqual(1);
      }),
      { numRuns: 400 },
    );
  });
});
