/** The approval ledger: approvals and standing grants survive a reopen, and a revoked grant no longer answers. */
import assert from "node:assert/strict";
import type { ApprovalRecord } from "@car/policy";
import type { DurableRuntimeStore } from "@car/engine";
import { assertHolds, assertRejectsWithCode } from "./assertions.ts";
import { START, type StoreCheck } from "./check.ts";

export const APPROVAL_CHECKS: readonly StoreCheck[] = [
  {
    name: "durable: keeps approvals and standing grants across a reopen; a revoked grant no longer answers",
    durable: [],
    async run(t) {
      const store = (await t.open()) as DurableRuntimeStore;
      const base: ApprovalRecord = {
        fingerprint: "f1",
        decision: "approved",
        required_tier: "full_access",
        reviewer: "conn:1",
        decided_at: START,
        expires_at: null,
        action_id: "a",
      };
      await store.approvals.record(base);
      await store.approvals.record({ ...base, fingerprint: "f2", decision: "rejected" });
      await store.approvals.record({ ...base, fingerprint: "f3", expires_at: START + 1000 });
      await t.closeAll();
      const again = (await t.open()) as DurableRuntimeStore;
      assertHolds(await again.approvals.latest("f1", START + 5000), { decision: "approved", reviewer: "conn:1" });
      assert.equal(await again.approvals.latest("f3", START + 5000), undefined);
      const grants = await again.approvals.grants(START + 5000);
      assert.deepStrictEqual(
        grants.map((g) => g.fingerprint),
        ["f1"],
      );
      await assertRejectsWithCode(
        Promise.resolve().then(() => again.approvals.revoke(grants[0]!.id + 1000, "admin", START)),
        "not_found",
      );
      const revoked = await again.approvals.revoke(grants[0]!.id, "admin", START + 6000);
      assertHolds(revoked, { fingerprint: "f1", revoked_by: "admin", revoked_at: START + 6000 });
      await t.closeAll();
      const third = (await t.open()) as DurableRuntimeStore;
      assert.equal(await third.approvals.latest("f1", START + 7000), undefined);
      assert.deepStrictEqual(await third.approvals.grants(START + 7000), []);
      assert.deepStrictEqual(
        (await third.approvals.list()).map((r) => r.fingerprint),
        ["f1", "f2", "f3"],
      );
      assert.deepStrictEqual(
        third.events.query({ kinds: ["approval_recorded", "approval_revoked"] }).map((e) => e.kind),
        ["approval_recorded", "approval_recorded", "approval_recorded", "approval_revoked"],
      );
    },
  },
];
