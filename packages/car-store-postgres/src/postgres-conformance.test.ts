/**
 * The PostgreSQL store runs the public store suite: every check passes, the
 * tables edited through a connection of their own for the audit checks.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresBinDir, startPostgresCluster } from "@car/test-kit/postgres-cluster";
import type { PostgresCluster } from "@car/test-kit/postgres-cluster";
import { runStoreCheck, STORE_CHECKS, type StoreHarness, type StoreTamper } from "@car/conformance/store";
import { postgres } from "./index.ts";

const installed = postgresBinDir() !== undefined;
if (!installed) console.warn("PostgreSQL is not installed (apt-get install postgresql): skipping the PostgreSQL conformance tests");

describe.skipIf(!installed)("postgres", () => {
  let cluster: PostgresCluster;
  let home: string;
  let databases = 0;
  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), "car-pg-conformance-"));
    cluster = await startPostgresCluster();
  });
  afterAll(() => {
    cluster?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  /** Edits the database through a connection of its own, as a writer without the audit key would. */
  const tamper = (url: string): StoreTamper => {
    const edit = async (sql: string, params: unknown[] = []): Promise<void> => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(sql, params);
      } finally {
        await client.end();
      }
    };
    return {
      forgeApproval: (fingerprint) => {
        const record = { fingerprint, decision: "approved", required_tier: "full_access", reviewer: "forger", decided_at: 0, expires_at: null };
        return edit("INSERT INTO car_approvals (fingerprint, decision, expires_at, record) VALUES ($1, 'approved', NULL, $2)", [
          fingerprint,
          JSON.stringify(record),
        ]);
      },
      unrevokeApprovals: () => edit("DELETE FROM car_revocations"),
      saveRows: () =>
        edit(`DROP TABLE IF EXISTS saved_approvals, saved_revocations, saved_postures;
              CREATE TABLE saved_approvals AS SELECT * FROM car_approvals; CREATE TABLE saved_revocations AS SELECT * FROM car_revocations;
              CREATE TABLE saved_postures AS SELECT * FROM car_postures;`),
      restoreRows: () =>
        edit(`DELETE FROM car_revocations; DELETE FROM car_approvals; DELETE FROM car_postures;
              INSERT INTO car_approvals SELECT * FROM saved_approvals; INSERT INTO car_revocations SELECT * FROM saved_revocations;
              INSERT INTO car_postures SELECT * FROM saved_postures;`),
      deleteNewestApproval: async (fingerprint) => {
        const newest = "(SELECT max(id) FROM car_approvals WHERE fingerprint = $1)";
        await edit(`DELETE FROM car_revocations WHERE approval_id = ${newest}`, [fingerprint]);
        await edit(`DELETE FROM car_approvals WHERE id = ${newest}`, [fingerprint]);
      },
      editPosture: (agent, posture) => edit("UPDATE car_postures SET posture = $1 WHERE agent_id = $2", [posture, agent]),
      editProposalStatus: (id, status) => edit("UPDATE car_proposals SET status = $1 WHERE proposal_id = $2", [status, id]),
      editTransition: (key, value) =>
        edit("UPDATE car_transitions SET mutation = $1 WHERE id = (SELECT max(id) FROM car_transitions WHERE key = $2)", [
          JSON.stringify({ op: "set", value }),
          key,
        ]),
      deleteTransition: (key) => edit("DELETE FROM car_transitions WHERE id = (SELECT max(id) FROM car_transitions WHERE key = $1)", [key]),
      forgeTransition: (key, value) =>
        edit(
          `INSERT INTO car_transitions (key, mutation, previous_version, version, proposal_id, action_id, timestamp)
           SELECT $1, $2, coalesce(max(version), 0), coalesce(max(version), 0) + 1, NULL, NULL, '2026-01-01T00:00:00.000Z' FROM car_transitions WHERE key = $1`,
          [key, JSON.stringify({ op: "set", value })],
        ),
    };
  };

  const harness = (): StoreHarness => {
    const n = ++databases;
    const url = cluster.createDatabase(`conformance_${n}`);
    const auditKeyFile = join(home, `audit-${n}.key`);
    return {
      durable: true,
      open: async (clock) => {
        const store = postgres(url, { clock, poolSize: 2, auditKeyFile });
        await store.ready();
        return store;
      },
      dispose: () => {},
      tamper: tamper(url),
    };
  };

  describe("RuntimeStore conformance: postgres", () => {
    for (const check of STORE_CHECKS) {
      it(check.name, async () => {
        const result = await runStoreCheck(check, harness);
        expect(result.error ?? result.reason ?? "").toBe("");
        expect(result.status).toBe("passed");
      });
    }
  });
});
