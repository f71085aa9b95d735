import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { surelyValidProposal } from "./proposal-shape.ts";
import { shapeProblems } from "./validate.ts";

const json = fc.jsonValue({ maxDepth: 2 });
/** Each field mostly well typed, sometimes noise, so both sides of every check are reached. */
const either = <T>(good: fc.Arbitrary<T>) => fc.oneof({ arbitrary: good, weight: 15 }, { arbitrary: json, weight: 1 });
const strings = fc.array(fc.string({ maxLength: 3 }), { maxLength: 3 });

const action = fc.record(
  {
    id: either(fc.string({ maxLength: 3 })),
    type: either(fc.constantFrom("tool_call", "state_write", "state_read", "assertion", "TOOL_CALL")),
    tool: either(fc.oneof(fc.string({ maxLength: 3 }), fc.constant(null))),
    parameters: either(fc.dictionary(fc.string({ maxLength: 3 }), json, { maxKeys: 2 })),
    expected_effects: either(fc.constant({})),
    metadata: either(fc.constant({})),
    dependencies: either(strings),
    state_dependencies: either(strings),
    read_set: either(fc.constant([])),
    write_set: either(strings),
    preconditions: either(fc.constantFrom([], [{ key: "k" }], [{ key: 1 }], [{}])),
    assumptions: either(fc.constantFrom([], [{ key: "k", read_version: 1 }], [{ key: "k", read_version: -1 }])),
    compensation: either(fc.constantFrom(null, { type: "tool", tool: "t" }, { type: "action_ref" })),
    invocation_mode: either(fc.constantFrom("one_shot", "streaming", "long_running", "batch")),
    reversibility: either(fc.constantFrom("reversible", "compensable", "irreversible", "undo")),
    failure_behavior: either(fc.constantFrom("abort", "retry", "skip", "ignore")),
    idempotent: either(fc.boolean()),
    max_retries: either(fc.oneof(fc.integer({ min: -2, max: 5 }), fc.constantFrom(1.5, 4294967295, 4294967296))),
    timeout_ms: either(fc.oneof(fc.integer({ min: -2, max: 5 }), fc.constant(null), fc.constant(0.5))),
    x_extra: json,
  },
  { requiredKeys: [] },
);

const proposal = fc.record(
  {
    id: either(fc.string({ maxLength: 3 })),
    source: either(fc.string({ maxLength: 3 })),
    timestamp: either(fc.constantFrom("2026-12-01T05:00:00Z", "2026-12-01 05:00:00.5+01:00", "yesterday", "2026-12-01T05:00:00")),
    context: either(fc.constant({})),
    actions: fc.oneof(fc.array(action, { maxLength: 3 }), json),
    x_extra: json,
  },
  { requiredKeys: [] },
);

describe("surelyValidProposal", () => {
  it("never vouches for a value the schema refuses", () => {
    let vouched = 0;
    fc.assert(
      fc.property(fc.oneof(proposal, json), (value) => {
        if (!surelyValidProposal(value)) return;
        vouched++;
        expect(shapeProblems("actionProposal", value)).toEqual([]);
      }),
      { numRuns: 3000 },
    );
    // The property is only worth something if the shortcut is taken often enough to be tested.
    expect(vouched).toBeGreaterThan(30);
  });

  it("vouches for the common planner shape, defaults left out", () => {
    const common = {
      id: "p1",
      timestamp: "2026-12-01T05:00:00.123Z",
      actions: [
        { id: "a", type: "tool_call", tool: "fetch", parameters: { url: "x" }, dependencies: [] },
        { id: "b", type: "state_write", parameters: { key: "k", value: "$a.output" }, dependencies: ["a"], failure_behavior: "retry", max_retries: 2 },
        { type: "assertion", tool: null, timeout_ms: null, compensation: null, preconditions: [], x_future: { any: [1] } },
      ],
      context: {},
    };
    expect(surelyValidProposal(common)).toBe(true);
    expect(surelyValidProposal(JSON.parse(JSON.stringify(common)))).toBe(true);
  });

  it("leaves what it does not check, or what is wrong, to the schema", () => {
    const base = { id: "a", type: "tool_call", tool: "t" };
    const unsure = [
      { actions: [{ ...base, preconditions: [{ key: "k" }] }] }, // valid, but items are not checked here
      { actions: [{ ...base, compensation: { type: "action_ref", action_id: "b" } }] },
      { actions: [{ ...base, tool: null }] }, // a tool_call needs a string tool
      { actions: [{ type: "tool_call" }] },
      { actions: [{ ...base, max_retries: 1.5 }] },
      { actions: [{ ...base, timeout_ms: -1 }] },
      { actions: [{ ...base, dependencies: ["a", 1] }] },
      { actions: [{ id: "a" }] },
      { actions: [[]] },
      { actions: {} },
      { timestamp: "2026-12-01", actions: [] },
      {},
      [],
      null,
    ];
    for (const value of unsure) expect(surelyValidProposal(value), JSON.stringify(value)).toBe(false);
  });
});
