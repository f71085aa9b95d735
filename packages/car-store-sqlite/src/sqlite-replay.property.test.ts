/**
 * Property: for any sequence of proposals (writes, tool effects, aborts by
 * a failing tool), the state replayed from the stored log's committed
 * `state_changed` events equals the stored state — before and after a
 * reopen — and the chain verifies.
 */
import fc from "fast-check";
import { expect, it } from "vitest";
import type { ActionInput, ActionProposalInput, JsonValue } from "@car/ir";
import { Runtime } from "@car/engine";
import { replayStateChanges } from "@car/engine/durable";
import { sqlite } from "./sqlite-store.ts";
import { tempDatabase } from "@car/test-kit/temp-database";

const key = fc.constantFrom("a", "b", "c", "__proto__", "constructor");
const value: fc.Arbitrary<JsonValue> = fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<JsonValue>;
const action = fc.oneof(
  fc.record({ kind: fc.constant("write" as const), key, value }),
  fc.record({ kind: fc.constant("effect" as const), key, value }),
  fc.record({ kind: fc.constant("fail" as const) }),
);
const proposal = fc.array(action, { minLength: 1, maxLength: 4 });

type Step = { kind: "write" | "effect"; key: string; value: JsonValue } | { kind: "fail" };

function toProposal(id: string, steps: Step[]): ActionProposalInput {
  return {
    id,
    actions: steps.map((s, i): ActionInput => {
      const deps = i === 0 ? [] : [`s${i - 1}`];
      if (s.kind === "fail") return { id: `s${i}`, type: "tool_call", tool: "boom", parameters: {}, dependencies: deps };
      if (s.kind === "write") return { id: `s${i}`, type: "state_write", parameters: { key: s.key, value: s.value }, dependencies: deps };
      return { id: `s${i}`, type: "tool_call", tool: "ok", parameters: {}, expected_effects: { [s.key]: s.value }, dependencies: deps };
    }),
  };
}

it("the state replayed from the log equals the stored state", { timeout: 120_000 }, async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(proposal, { minLength: 1, maxLength: 6 }), async (proposals) => {
      const temp = tempDatabase();
      try {
        const store = sqlite(temp.db, { synchronous: "normal" });
        const rt = new Runtime({ store });
        rt.registerTool("ok", () => null);
        rt.registerTool("boom", () => {
          throw new Error("boom");
        });
        for (const [i, steps] of proposals.entries()) await rt.executeProposal(toProposal(`p${i}`, steps));
        expect(replayStateChanges(store.storedEvents())).toEqual(store.state.snapshot());
        await rt.close();
        const again = sqlite(temp.db);
        try {
          expect(replayStateChanges(again.storedEvents())).toEqual(again.state.snapshot());
          expect(again.verifyChain().ok).toBe(true);
        } finally {
          await again.close();
        }
      } finally {
        temp.remove();
      }
    }),
    { numRuns: 40 },
  );
});
