/** Durability: what one opening of the data wrote, the next one sees — state, versions and events — and event numbering continues. */
import assert from "node:assert/strict";
import { assertSameJson, write } from "./assertions.ts";
import type { StoreCheck } from "./check.ts";

export const DURABLE_CHECKS: readonly StoreCheck[] = [
  {
    name: "durable: survives a reopen: state, versions, events; numbering continues",
    durable: [],
    async run(t) {
      const { rt } = await t.runtime();
      await rt.executeProposal({ id: "p1", actions: [write("a", "k", 1), write("b", "k", 2)] });
      const before = rt.events.query();
      await t.closeAll();
      const { rt: again } = await t.runtime();
      assert.deepStrictEqual({ ...again.state.snapshot() }, { k: 2 });
      assert.equal(again.state.version("k"), 2);
      assertSameJson(again.events.query(), before, "the events after the reopen");
      await again.executeProposal({ id: "p2", actions: [write("a", "k", 3)] });
      assert.equal(again.events.query({ proposal_id: "p2" })[0]!.seq, before.at(-1)!.seq + 1);
    },
  },
];
