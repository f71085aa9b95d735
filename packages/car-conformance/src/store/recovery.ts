/** Recovery: a proposal a stopped process left executing is marked interrupted on the next opening, state untouched. */
import assert from "node:assert/strict";
import { Runtime } from "@car/engine";
import { START, type StoreCheck } from "./check.ts";

export const RECOVERY_CHECKS: readonly StoreCheck[] = [
  {
    name: "durable: marks a proposal left executing by a stopped process as interrupted, state untouched",
    durable: ["beginProposal", "recover"],
    async run(t) {
      const store = await t.open();
      store.state.set("k", "before");
      await store.beginProposal!({ proposal_id: "lost", run_id: "run-lost", timestamp: new Date(t.clock.now()).toISOString() });
      await t.closeAll();
      const again = await t.open();
      const rt2 = new Runtime({ store: again, clock: t.clock });
      assert.deepStrictEqual(await rt2.recover(), [{ proposal_id: "lost", run_id: "run-lost", timestamp: new Date(START).toISOString() }]);
      assert.deepStrictEqual(await rt2.recover(), []);
      assert.deepStrictEqual({ ...again.state.snapshot() }, { k: "before" });
      assert.deepStrictEqual(
        again.events.query({ proposal_id: "lost" }).map((e) => [e.kind, e.data["run_id"]]),
        [["proposal_interrupted", "run-lost"]],
      );
    },
  },
];
