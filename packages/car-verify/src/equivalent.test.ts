import { describe, expect, it } from "vitest";
import { DEFAULT_PROBES, equivalent, equivalentDetailed } from "./equivalent.ts";
import { GATED_DEPLOY } from "../test/fixtures.ts";

const write = (id: string, key: string, value: unknown, extra: object = {}) => ({
  id,
  type: "state_write",
  parameters: { key, value },
  expected_effects: { [key]: value },
  ...extra,
});

describe("equivalent", () => {
  it("uses exactly the probes {} and {x: 1, y: 2} by default", () => {
    expect(DEFAULT_PROBES).toEqual([{}, { x: 1, y: 2 }]);
    // Equal from {} but not from {x:1,y:2}: only the second default probe tells them apart.
    const a = { actions: [write("w", "x", 5)] };
    const b = { actions: [write("w", "x", 5, { preconditions: [{ key: "x", operator: "not_exists" }] })] };
    const report = equivalentDetailed(a, b);
    expect(report).toEqual({ equivalent: false, probes: 2, difference: { probe_index: 1, probe: { x: 1, y: 2 }, key: "x", left: 5, right: 1 } });
  });

  it("names the first probe and key that differ, omitting a side that leaves the key unset", () => {
    const report = equivalentDetailed({ actions: [write("a", "k", 1), write("b", "m", 2)] }, { actions: [write("a", "m", 2)] });
    expect(report.equivalent).toBe(false);
    expect(report.difference).toEqual({ probe_index: 0, probe: {}, key: "k", left: 1 });
  });

  it("treats proposals with the same end state as equivalent whatever their shape", () => {
    const two = { actions: [write("a", "k", 1), write("b", "k", 2)] };
    const one = { actions: [write("only", "k", 2)] };
    expect(equivalent(two, one)).toBe(true);
  });

  it("inherits simulate's gating: a gate that blocks one proposal's write makes them differ (car#622)", () => {
    const ungated = GATED_DEPLOY.map((a) => (a.id === "deploy" ? { ...a, preconditions: [] } : a));
    const report = equivalentDetailed({ actions: GATED_DEPLOY }, { actions: ungated });
    expect(report.equivalent).toBe(false);
    expect(report.difference).toMatchObject({ probe_index: 0, key: "deployed", right: true });
  });

  it("samples: proposals differing only on a key no probe reaches compare equal", () => {
    const a = { actions: [write("w", "z", 1, { preconditions: [{ key: "mode", operator: "eq", value: "prod" }] })] };
    const b = { actions: [write("w", "z", 2, { preconditions: [{ key: "mode", operator: "eq", value: "prod" }] })] };
    // Neither default probe sets mode=prod, so the differing write never happens: a blind spot.
    expect(equivalent(a, b)).toBe(true);
    // A probe that reaches the branch exposes it.
    expect(equivalentDetailed(a, b, [{ mode: "prod" }])).toMatchObject({ equivalent: false, difference: { key: "z", left: 1, right: 2 } });
  });

  it("compares over the given probes only", () => {
    expect(equivalentDetailed({ actions: [] }, { actions: [] }, [{ a: 1 }, { b: 2 }, { c: 3 }])).toEqual({ equivalent: true, probes: 3 });
  });
});
