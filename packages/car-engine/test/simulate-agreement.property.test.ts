/**
 * DECISIONS §13: `simulate` predicts what the engine leaves behind. For
 * random proposals and starting states, when every tool succeeds with its
 * declared effects, simulate's post-state equals the engine's — including
 * actions rejected for an absent state dependency or a failing
 * precondition, and their dependants.
 *
 * Generator limits, so the comparison is well defined: every action is
 * `skip` (a rejection drops the action, as simulate models, instead of
 * aborting the proposal); preconditions look at keys no action writes
 * (an unordered writer would make the outcome depend on scheduling);
 * proposals where two writers of one key are unordered (verify's write
 * conflict: the final value depends on scheduling) are left out; and
 * `state_write`s have no checks, so an ordering-only edge between two
 * writes of one key never carries a rejection.
 */
import fc from "fast-check";
import type { ActionInput, JsonValue } from "@car/ir";
import { simulate, verify } from "@car/verify";
import { describe, expect, it } from "vitest";
import { fakeRuntime } from "./helpers.ts";

const WRITTEN = ["a", "b", "c"];
const CHECKED = ["p", "q"];

const effects = fc.dictionary(fc.constantFrom(...WRITTEN), fc.integer({ min: 0, max: 3 }), { maxKeys: 2 });

const toolAction = fc.record({
  effects,
  deps: fc.array(fc.nat(), { maxLength: 2 }),
  stateDeps: fc.subarray([...WRITTEN, ...CHECKED], { maxLength: 2 }),
  pre: fc.option(
    fc.record({ key: fc.constantFrom(...CHECKED), operator: fc.constantFrom("exists", "not_exists", "eq"), value: fc.integer({ min: 0, max: 1 }) }),
    { nil: undefined },
  ),
});
const writeAction = fc.record({ key: fc.constantFrom(...WRITTEN), value: fc.integer({ min: 0, max: 3 }), effects });

const proposalArb = fc
  .array(
    fc.oneof(
      toolAction.map((t) => ({ kind: "tool" as const, ...t })),
      writeAction.map((w) => ({ kind: "write" as const, ...w })),
    ),
    { minLength: 1, maxLength: 8 },
  )
  .map((specs) => ({
    id: "p",
    actions: specs.map((s, i): ActionInput => {
      const id = `x${i}`;
      if (s.kind === "write")
        return { id, type: "state_write", parameters: { key: s.key, value: s.value }, expected_effects: s.effects, failure_behavior: "skip" };
      const deps = i === 0 ? [] : [...new Set(s.deps.map((d) => `x${d % i}`))];
      return {
        id,
        type: "tool_call",
        tool: "t",
        parameters: {},
        expected_effects: s.effects,
        dependencies: deps,
        state_dependencies: s.stateDeps,
        preconditions: s.pre === undefined ? [] : [s.pre],
        failure_behavior: "skip",
      };
    }),
  }));

const stateArb = fc.dictionary(fc.constantFrom(...WRITTEN, ...CHECKED), fc.integer({ min: 0, max: 1 }), { maxKeys: 4 });

describe("simulate agrees with the engine", () => {
  it("has the engine's post-state whenever every tool succeeds with its declared effects", async () => {
    await fc.assert(
      fc.asyncProperty(proposalArb, stateArb, async (proposal, state) => {
        fc.pre(!verify(proposal).issues.some((i) => /write '[^']*' with no dependency path/.test(i.message)));
        const { rt } = fakeRuntime();
        rt.registerTool("t", () => "ok");
        for (const [key, value] of Object.entries(state)) rt.state.set(key, value);
        await rt.executeProposal(proposal);
        const engine: Record<string, JsonValue> = rt.state.snapshot();
        expect(engine).toEqual(simulate(proposal, state));
      }),
      { numRuns: 400 },
    );
  });
});
