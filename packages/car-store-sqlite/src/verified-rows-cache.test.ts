/**
 * The approval ledger's cache of verified rows never answers from a
 * database that changed under it: a commit by another connection (a hand
 * edit, another process), a write of this store, and a write of this store
 * rolled back each make the next `latest` read and verify again.
 */
import Database from "better-sqlite3";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { ApprovalRecord } from "@car/policy";
import { tempDatabase } from "@car/test-kit/temp-database";
import type { TempDir } from "@car/test-kit/temp-database";
import { sqlite } from "./sqlite-store.ts";
import type { SqliteStore } from "./sqlite-store.ts";

let temp: TempDir;
let store: SqliteStore;
const grant = (decided_at: number): ApprovalRecord => ({
  fingerprint: "f",
  decision: "approved",
  required_tier: "full_access",
  reviewer: "ops",
  decided_at,
  expires_at: null,
});

beforeEach(async () => {
  temp = tempDatabase();
  store = sqlite(temp.db, { auditKeyFile: `${temp.dir}/audit.key` });
  await store.approvals.record(grant(1));
  expect(await store.approvals.latest("f", 10)).toMatchObject({ id: 1 });
});
afterEach(async () => {
  await store.close();
  temp.remove();
});

it("a row edited by another connection after a cached answer is refused, not answered from the cache", async () => {
  const raw = new Database(temp.db);
  raw.prepare("UPDATE approvals SET record = replace(record, '\"ops\"', '\"mallory\"') WHERE id = 1").run();
  raw.close();
  await expect(store.approvals.latest("f", 10)).rejects.toMatchObject({ code: "chain_broken" });
});

it("a revocation through the store is seen by the next answer", async () => {
  await store.approvals.revoke(1, "admin", 5);
  expect(await store.approvals.latest("f", 10)).toBeUndefined();
  await store.approvals.record(grant(6));
  expect(await store.approvals.latest("f", 10)).toMatchObject({ id: 2 });
});

it("rows read inside a transaction later rolled back are never answered", async () => {
  expect(() =>
    store.atomically(() => {
      void store.approvals.record({ ...grant(2), fingerprint: "g" });
      // Read inside the transaction: it sees its own uncommitted decision.
      void store.approvals.latest("g", 10);
      throw new Error("abort");
    }),
  ).toThrow("abort");
  expect(await store.approvals.latest("g", 10)).toBeUndefined();
  expect(store.verifyChain().ok).toBe(true);
});
