/**
 * Cutting the log is an operator act on the record (DECISIONS §24):
 * truncating or clearing leaves a signed checkpoint naming the act, chained
 * to the one before it; the retained log still verifies, the report names
 * every cut (never plain "intact" over a shorter log), and the chain goes on
 * after a cut — across a reopen too.
 */
import assert from "node:assert/strict";
import type { DurableRuntimeStore } from "@car/engine";
import { assertHolds, assertRejectsWithCode, write } from "./assertions.ts";
import { START, type StoreCheck } from "./check.ts";

export const LOG_CUT_CHECKS: readonly StoreCheck[] = [
  {
    name: "durable: truncating and clearing the log leave signed, chained checkpoints naming the act; the rest verifies and the chain goes on",
    durable: ["verifyChain", "enforceRetention", "checkpoints"],
    async run(t) {
      const { rt, store: opened } = await t.runtime();
      const store = opened as DurableRuntimeStore;
      for (let i = 0; i < 3; i++) await rt.executeProposal({ id: `p${i}`, actions: [write("a", `k${i}`, i)] });
      const total = store.events.count();
      await assertRejectsWithCode(
        Promise.resolve().then(() => store.enforceRetention(START, { mode: "truncate" })),
        "invalid_params",
      );

      const truncated = await store.enforceRetention(START, { mode: "truncate", max_events: 2, act: "truncate" });
      assert.equal(truncated.removed, total - 2);
      assertHolds(truncated.checkpoint!.checkpoint, { act: "truncate", removed: total - 2, first_removed_seq: 1, previous: null });
      assert.equal(store.events.count(), 2, "the cut events are gone from the log as this store reads it");
      const afterTruncate = await store.verifyChain();
      assert.ok(afterTruncate.ok, JSON.stringify(afterTruncate));
      if (afterTruncate.ok) {
        assert.deepStrictEqual(
          afterTruncate.cuts.map((c) => [c.act, c.removed]),
          [["truncate", total - 2]],
        );
        assertHolds(afterTruncate, { verified: 2, state: { compared: false } });
      }

      await rt.executeProposal({ id: "after-truncate", actions: [write("a", "k9", 9)] });
      const left = store.events.count();
      const cleared = await store.enforceRetention(START, { mode: "truncate", max_events: 0, act: "clear" });
      assert.equal(cleared.removed, left);
      assert.equal(cleared.checkpoint!.checkpoint.previous, truncated.checkpoint!.signature, "the clear's checkpoint names the truncation's");
      assert.equal(store.events.count(), 0);
      await rt.executeProposal({ id: "after-clear", actions: [write("a", "k10", 10)] });
      await t.closeAll();

      const again = (await t.open()) as DurableRuntimeStore;
      const report = await again.verifyChain();
      assert.ok(report.ok, JSON.stringify(report));
      if (report.ok)
        assert.deepStrictEqual(
          report.cuts.map((c) => c.act),
          ["truncate", "clear"],
        );
      assert.deepStrictEqual(
        (await again.checkpoints()).map((c) => c.checkpoint.act),
        ["truncate", "clear"],
      );
      assert.deepStrictEqual([...new Set(again.events.query({}).map((e) => e.proposal_id))], ["after-clear"]);
    },
  },
];
