import { CarError, COST_TARGET_DEFAULTS } from "@car/ir";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { costTarget, rankProposals, scoreProposal, toolHistory, WARNING_FACTOR } from "./index.ts";
import type { ToolHistory } from "./index.ts";
import { fakeRuntime, tc } from "../../test/helpers.ts";

const chain = (n: number, tool: string, extra: Record<string, unknown> = {}) => ({
  // Distinct parameters: identical repeated calls would draw verify's runaway-loop warning.
  actions: Array.from({ length: n }, (_, i) => tc(`a${i}`, tool, { parameters: { step: i }, ...extra, dependencies: i === 0 ? [] : [`a${i - 1}`] })),
});
const history = (entries: Record<string, [number, number, number | undefined]>): ToolHistory =>
  new Map(Object.entries(entries).map(([tool, [succeeded, failed, mean]]) => [tool, { succeeded, failed, mean_duration_ms: mean }]));

describe("scoreProposal (agent-ir-spec.md §CostTarget)", () => {
  it("uses the seed's defaults", () => {
    expect(COST_TARGET_DEFAULTS).toEqual({ target_tool_calls: 5, target_duration_ms: 5000, target_actions: 10, cost_weight: 0.2 });
    expect(costTarget({ cost_weight: 0.5 })).toEqual({ ...COST_TARGET_DEFAULTS, cost_weight: 0.5 });
  });

  it("combines success likelihood from history with cost efficiency against the target", () => {
    // 6 chained calls of a tool that succeeded 3 times and failed once, 2 s each.
    const s = scoreProposal(chain(6, "slow"), { history: history({ slow: [3, 1, 2000] }) });
    expect(s.success_likelihood).toBeCloseTo(0.8 ** 6, 12);
    expect(s.estimate).toEqual({ tool_calls: 6, actions: 6, duration_ms: 12_000 });
    const efficiency = (5 / 6 + 1 + 5000 / 12_000) / 3;
    expect(s.cost_efficiency).toBeCloseTo(efficiency, 12);
    expect(s.score).toBeCloseTo(0.8 ** 6 * 0.8 + efficiency * 0.2, 12);
  });

  it("counts retries and skips in the chance the run survives a call", () => {
    const h = history({ t: [1, 1, undefined] }); // one call succeeds with (1+1)/(1+1+1) = 2/3
    expect(scoreProposal(chain(1, "t"), { history: h }).success_likelihood).toBeCloseTo(2 / 3, 12);
    expect(scoreProposal(chain(1, "t", { failure_behavior: "retry", max_retries: 2 }), { history: h }).success_likelihood).toBeCloseTo(1 - (1 / 3) ** 3, 12);
    expect(scoreProposal(chain(1, "t", { failure_behavior: "skip" }), { history: h }).success_likelihood).toBe(1);
  });

  it("takes the critical path, not the sum, for duration; unseen tools cost the target's per-action share", () => {
    const fanOut = { actions: [tc("a", "x"), tc("b", "x"), tc("c", "x"), tc("d", "y", { dependencies: ["a"] })] };
    const s = scoreProposal(fanOut, { history: history({ x: [5, 0, 100] }) });
    expect(s.estimate.duration_ms).toBe(100 + 500); // y is unseen: 5000 / 10
  });

  it("scores a proposal verify rejects at zero likelihood, and lowers it per warning", () => {
    const invalid = scoreProposal(chain(2, "ghost"), { verifyOptions: { tools: ["real"] } });
    expect(invalid.valid).toBe(false);
    expect(invalid.success_likelihood).toBe(0);
    const racing = { actions: [tc("a", "t", { expected_effects: { k: 1 } }), tc("b", "t", { expected_effects: { k: 2 } })] };
    const s = scoreProposal(racing);
    expect(s.warnings).toBeGreaterThan(0);
    expect(s.success_likelihood).toBeCloseTo(WARNING_FACTOR ** s.warnings, 12);
  });

  it("refuses a malformed target and a proposal that does not parse with typed errors", () => {
    for (const bad of [
      { cost_weight: 1.5 },
      { cost_weight: -0.1 },
      { target_actions: 0 },
      { target_duration_ms: Number.NaN },
      { target_tool_calls: "5" as never },
    ]) {
      expect(() => scoreProposal(chain(1, "t"), { target: bad })).toThrow(CarError);
    }
    try {
      scoreProposal("{not json");
      expect.unreachable();
    } catch (e) {
      expect((e as CarError).code).toBe("invalid_proposal");
    }
  });

  it("stays in [0, 1], follows the formula at both weights, and never rises with more failures (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.nat(30),
        fc.nat(30),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.constantFrom("abort", "retry", "skip"),
        (n, succeeded, failed, w, failure_behavior) => {
          const p = chain(n, "t", { failure_behavior });
          const s = scoreProposal(p, { history: history({ t: [succeeded, failed, 300] }), target: { cost_weight: w } });
          expect(s.score).toBeGreaterThanOrEqual(0);
          expect(s.score).toBeLessThanOrEqual(1 + 1e-12);
          expect(s.score).toBeCloseTo(s.success_likelihood * (1 - w) + s.cost_efficiency * w, 12);
          const worse = scoreProposal(p, { history: history({ t: [succeeded, failed + 1, 300] }), target: { cost_weight: w } });
          expect(worse.score).toBeLessThanOrEqual(s.score + 1e-12);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("rankProposals", () => {
  it("puts the best first, keeps ties in input order, and unparseable candidates last with their error", () => {
    const ranked = rankProposals([chain(12, "t"), "{oops", chain(2, "t"), chain(2, "t")]);
    expect(ranked.map((r) => r.index)).toEqual([2, 3, 0, 1]);
    expect(ranked[3]!.error?.code).toBe("invalid_proposal");
    expect(ranked[0]!.proposal?.proposal.actions).toHaveLength(2);
  });
});

describe("toolHistory", () => {
  it("counts each tool's outcomes and times its calls from the runtime's own events", async () => {
    const { rt, timers } = fakeRuntime();
    rt.registerTool("ok", async () => {
      timers.advance(250);
      return { fine: true };
    });
    rt.registerTool("bad", async () => {
      timers.advance(50);
      throw new Error("nope");
    });
    await rt.executeProposal(chain(3, "ok"));
    await rt.executeProposal({ actions: [tc("x", "bad")] });
    const h = toolHistory(rt.events);
    expect(h.get("ok")).toEqual({ succeeded: 3, failed: 0, mean_duration_ms: 250 });
    expect(h.get("bad")).toMatchObject({ succeeded: 0, failed: 1 });
    expect(h.has("never")).toBe(false);
  });
});
