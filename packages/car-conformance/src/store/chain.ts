/** The hash chain: every event links to the one before it, and the store verifies the chain. */
import assert from "node:assert/strict";
import type { CarEvent, ChainReport, DurableRuntimeStore } from "@car/engine";
import { GENESIS_HASH } from "@car/engine/durable";
import { assertHolds, write } from "./assertions.ts";
import type { StoreCheck } from "./check.ts";

export const CHAIN_CHECKS: readonly StoreCheck[] = [
  {
    name: "durable: chains every event to the one before it and verifies",
    durable: ["verifyChain"],
    async run(t) {
      const { rt, store } = await t.runtime();
      await rt.executeProposal({ id: "p1", actions: [write("a", "k", 1)] });
      await rt.executeProposal({ id: "p2", actions: [write("a", "k", 2)] });
      const events: CarEvent[] = rt.events.query();
      assert.equal(events[0]!.prev_hash, GENESIS_HASH);
      for (let i = 1; i < events.length; i++) assert.equal(events[i]!.prev_hash, events[i - 1]!.hash, `event ${events[i]!.seq}'s prev_hash`);
      const report: ChainReport = await (store as DurableRuntimeStore).verifyChain();
      assertHolds(report, { ok: true, verified: events.length, head: { seq: events.at(-1)!.seq, hash: events.at(-1)!.hash } });
    },
  },
];
