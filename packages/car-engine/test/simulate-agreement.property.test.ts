/**
 * DECISIONS §13: `simulate` predicts what the engine leaves behind. For
 * random proposals and starting states, when every tool succeeds with its
 * declared effects, simulate's post-state equals the engine's — including
 * actions rejected for an absent state dependency or a failing
 * precondition, and their dependants.
 *
 * Generator limits, so the comparison is well defined: every action is
 * `skip` (a rejection drops the action, as simulate models, instead of
 * aborting the proposal); proposals where two writers of one key are
 * unordered (verify's write conflict: the final value depends on
 * scheduling), or where a precondition reads a key some writer is unordered
 * with, are left out — unless that writer is surely rejected, so a
 * precondition may read a key a rejected action would have written, the
 * case where verify's optimistic walk and the engine part ways; and
 * `state_write`s have no checks, so an ordering-only edge between two
 * writes of one key never carries a rejection.
 */
import fc from "fast-check";
import type { ActionInput, JsonValue } from "@car/ir";
import { effectiveWriteSet, parseProposalWithGraph } from "@car/ir";
import { checkPrecondition } from "@car/ir/internal";
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
    fc.record({ key: fc.constantFrom(...CHECKED, ...WRITTEN), operator: fc.constantFrom("exists", "not_exists", "eq"), value: fc.integer({ min: 0, max: 1 }) }),
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

/**
 * Whether the outcome is fixed whatever the schedule: every precondition's
 * reader is ordered, one way or the other, with every other writer of its
 * key — or that writer is surely rejected, by a check on a key no action
 * writes (so its verdict is the starting state's).
 */
function readsAreSettled(input: unknown, state: Readonly<Record<string, JsonValue>>): boolean {
  const { proposal, graph } = parseProposalWithGraph(input);
  const ancestors = graph.preds.map(() => new Set<number>());
  for (const i of graph.order) for (const p of graph.preds[i]!) ancestors[i] = new Set([...ancestors[i]!, ...ancestors[p]!, p]);
  const initial = new Map(Object.entries(state));
  const surelyRejected = proposal.actions.map(
    (a) =>
      a.preconditions.some((pre) => CHECKED.includes(pre.key) && checkPrecondition(pre, initial) !== undefined) ||
      a.state_dependencies.some((key) => CHECKED.includes(key) && !initial.has(key)),
  );
  const writes = proposal.actions.map(effectiveWriteSet);
  return proposal.actions.every((reader, r) =>
    reader.preconditions.every(({ key }) =>
      writes.every((keys, w) => w === r || !keys.includes(key) || surelyRejected[w] || ancestors[r]!.has(w) || ancestors[w]!.has(r)),
    ),
  );
}

describe("simulate agrees with the engine", () => {
  it("has the engine's post-state whenever every tool succeeds with its declared effects", async () => {
    await fc.assert(
      fc.asyncProperty(proposalArb, stateArb, async (proposal, state) => {
        fc.pre(!verify(proposal).issues.some((i) => /write '[^']*' with no dependency path/.test(i.message)) && readsAreSettled(proposal, state));
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

  it("runs a reader whose precondition fails only under a rejected action's declared write, as simulate predicts", async () => {
    // verify's optimistic walk applies a1's k := 2, so it reports a3 blocked too; the engine rejects a1 and runs a3.
    const proposal = {
      id: "p",
      actions: [
        { id: "a1", type: "state_write", parameters: { key: "k", value: 2 }, preconditions: [{ key: "gate", operator: "exists" }], failure_behavior: "skip" },
        { id: "a2", type: "tool_call", tool: "t", parameters: {}, failure_behavior: "skip" },
        {
          id: "a3",
          type: "state_write",
          dependencies: ["a2"],
          parameters: { key: "done", value: true },
          preconditions: [{ key: "k", value: 1 }],
          failure_behavior: "skip",
        },
      ],
    } satisfies { id: string; actions: ActionInput[] };
    expect(verify(proposal, { state: { k: 1 } }).issues.map((i) => i.action_id)).toEqual(["a1", "a3"]);
    const { rt } = fakeRuntime();
    rt.registerTool("t", () => "ok");
    rt.state.set("k", 1);
    const result = await rt.executeProposal(proposal);
    expect(result.results.map((r) => r.status)).toEqual(["rejected", "succeeded", "succeeded"]);
    expect(rt.state.snapshot()).toEqual({ k: 1, done: true });
    expect(simulate(proposal, { k: 1 })).toEqual(rt.state.snapshot());
  });
});
