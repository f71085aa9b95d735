/**
 * The SQLite store runs the public store suite (`@car/conformance/store`):
 * one vitest test per check, every check passing (durable ones included,
 * the tables edited through a second connection for the audit checks);
 * then the suite as a store author runs it, in one report; and a durable
 * store without a hash chain has the chain check skipped with the reason.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { tempDatabase } from "@car/test-kit/temp-database";
import { runStoreCheck, runStoreConformance, STORE_CHECKS, type StoreHarness, type StoreTamper } from "@car/conformance/store";
import type { RuntimeStore } from "@car/engine";
import { describe, expect, it } from "vitest";
import { sqlite } from "./sqlite-store.ts";

/** Edits the file through a connection of its own, as a writer without the audit key would. */
function tamper(path: string): StoreTamper {
  const edit = (sql: string, ...params: unknown[]): void => {
    const db = new Database(path);
    try {
      if (params.length === 0) db.exec(sql);
      else db.prepare(sql).run(...params);
    } finally {
      db.close();
    }
  };
  return {
    forgeApproval: (fingerprint) => {
      const record = { fingerprint, decision: "approved", required_tier: "full_access", reviewer: "forger", decided_at: 0, expires_at: null };
      edit(
        "INSERT INTO approvals (fingerprint, decision, decided_at, expires_at, record) VALUES (?, 'approved', 0, NULL, ?)",
        fingerprint,
        JSON.stringify(record),
      );
    },
    unrevokeApprovals: () => edit("DELETE FROM revocations"),
    saveRows: () =>
      edit(`DROP TABLE IF EXISTS saved_approvals; DROP TABLE IF EXISTS saved_revocations; DROP TABLE IF EXISTS saved_postures;
            CREATE TABLE saved_approvals AS SELECT * FROM approvals; CREATE TABLE saved_revocations AS SELECT * FROM revocations;
            CREATE TABLE saved_postures AS SELECT * FROM postures;`),
    restoreRows: () =>
      edit(`DELETE FROM revocations; DELETE FROM approvals; DELETE FROM postures;
            INSERT INTO approvals SELECT * FROM saved_approvals; INSERT INTO revocations SELECT * FROM saved_revocations;
            INSERT INTO postures SELECT * FROM saved_postures;`),
    deleteNewestApproval: (fingerprint) => {
      const newest = "(SELECT max(id) FROM approvals WHERE fingerprint = ?)";
      edit(`DELETE FROM revocations WHERE approval_id = ${newest}`, fingerprint);
      edit(`DELETE FROM approvals WHERE id = ${newest}`, fingerprint);
    },
    editPosture: (agent, posture) => edit("UPDATE postures SET posture = ? WHERE agent_id = ?", posture, agent),
    editProposalStatus: (id, status) => edit("UPDATE proposals SET status = ? WHERE proposal_id = ?", status, id),
    editTransition: (key, value) =>
      edit("UPDATE transitions SET mutation = ? WHERE id = (SELECT max(id) FROM transitions WHERE key = ?)", JSON.stringify({ op: "set", value }), key),
    deleteTransition: (key) => edit("DELETE FROM transitions WHERE id = (SELECT max(id) FROM transitions WHERE key = ?)", key),
    forgeTransition: (key, value) =>
      edit(
        `INSERT INTO transitions (key, mutation, previous_version, version, proposal_id, action_id, timestamp)
         SELECT ?, ?, coalesce(max(version), 0), coalesce(max(version), 0) + 1, NULL, NULL, '2026-01-01T00:00:00.000Z' FROM transitions WHERE key = ?`,
        key,
        JSON.stringify({ op: "set", value }),
        key,
      ),
  };
}

const harness = (): StoreHarness => {
  const temp = tempDatabase();
  const auditKeyFile = join(temp.dir, "audit.key");
  return { durable: true, open: (clock) => sqlite(temp.db, { clock, auditKeyFile }), dispose: () => temp.remove(), tamper: tamper(temp.db) };
};

describe("RuntimeStore conformance: sqlite", () => {
  for (const check of STORE_CHECKS) {
    it(check.name, async () => {
      const result = await runStoreCheck(check, harness);
      expect(result.error ?? result.reason ?? "").toBe("");
      expect(result.status).toBe("passed");
    });
  }
});

describe("the public store suite on SQLite", () => {
  it("passes a durable SQLite store on every check", async () => {
    const report = await runStoreConformance("sqlite", harness);
    expect(report.results.filter((r) => r.status !== "passed")).toEqual([]);
    expect(report.passed).toBe(STORE_CHECKS.length);
  });

  it("claims durability only where the store offers the parts: a durable store without a hash chain skips the chain check", async () => {
    const temp = tempDatabase();
    try {
      const report = await runStoreConformance(
        "no-chain",
        () => ({
          durable: true,
          open: (clock) => {
            const store = sqlite(temp.db, { clock });
            const noChain: RuntimeStore = {
              state: store.state,
              events: store.events,
              approvals: store.approvals,
              commitProposal: (c) => store.commitProposal(c),
              close: () => store.close(),
            };
            return noChain;
          },
          dispose: () => {},
        }),
        { only: ["chains every event"] },
      );
      expect(report.results).toEqual([expect.objectContaining({ status: "skipped", reason: "the store offers no verifyChain" })]);
    } finally {
      temp.remove();
    }
  });
});
