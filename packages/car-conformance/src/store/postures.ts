/** Per-agent postures survive a reopen, and a per-tier entry refines the all-tier one. */
import assert from "node:assert/strict";
import type { DurableRuntimeStore } from "@car/engine";
import { START, type StoreCheck } from "./check.ts";

export const POSTURE_CHECKS: readonly StoreCheck[] = [
  {
    name: "durable: keeps per-agent postures across a reopen; a per-tier entry refines the all-tier one",
    durable: ["postures"],
    async run(t) {
      const store = (await t.open()) as DurableRuntimeStore;
      await store.postures.set("bot", "require_approval", null, START);
      await store.postures.set("bot", "always_allow", "read_only", START);
      await store.postures.set("rogue", "deny", null, START);
      await t.closeAll();
      const again = (await t.open()) as DurableRuntimeStore;
      assert.equal(await again.postures.resolve("bot", "read_only"), "always_allow");
      assert.equal(await again.postures.resolve("bot", "full_access"), "require_approval");
      assert.equal(await again.postures.resolve("rogue", "sandbox_edit"), "deny");
      assert.equal(await again.postures.resolve("stranger", "read_only"), undefined);
      assert.equal(await again.postures.clear("bot", null), 2);
      assert.equal(await again.postures.resolve("bot", "read_only"), undefined);
      assert.deepStrictEqual(
        (await again.postures.list()).map((p) => p.agent_id),
        ["rogue"],
      );
    },
  },
];
