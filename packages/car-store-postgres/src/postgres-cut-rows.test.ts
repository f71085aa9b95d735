/**
 * After a cut of the PostgreSQL log, the rows whose events it removed stay
 * proven: the cut records a digest of each (its checkpoint signs the record), so an older
 * copy of an approval or posture restored with its old, valid seal, an
 * edited proposal status or transition, a deleted row and an inserted one
 * are each reported by `verifyChain` — where the seals alone let them pass —
 * and so is a record rewritten to match, or removed.
 * The database is edited through a second connection, as an attacker with
 * write access would.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPostgresCluster } from "@car/test-kit/postgres-cluster";
import type { PostgresCluster } from "@car/test-kit/postgres-cluster";
import { Runtime } from "@car/engine";
import { oneShotSql } from "../test/one-shot-sql.ts";
import type { Sql } from "../test/one-shot-sql.ts";
import { postgres } from "./index.ts";
import type { PostgresStore } from "./index.ts";

let cluster: PostgresCluster;
let home: string;
const open: PostgresStore[] = [];
beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "car-pg-cut-rows-"));
  cluster = await startPostgresCluster();
});
afterAll(async () => {
  for (const store of open) await store.close();
  cluster?.stop();
  rmSync(home, { recursive: true, force: true });
});

let databases = 0;
/**
 * A database with two runs, an approval since revoked and a posture since
 * changed (their rows before the change kept, with their then valid seals),
 * and then every event cut (`events.clear`).
 */
async function cutDatabase(): Promise<{ store: PostgresStore; sql: Sql; older: { approvalSeal: string; posture: pg.QueryResultRow } }> {
  const url = cluster.createDatabase(`cut_rows_${++databases}`);
  const store = postgres(url, { poolSize: 2, auditKeyFile: join(home, "audit.key") });
  open.push(store);
  await store.ready();
  const sql = oneShotSql(url);
  const rt = new Runtime({ store });
  for (const id of ["p1", "p2"]) await rt.executeProposal({ id, actions: [{ id: "w", type: "state_write", parameters: { key: `k-${id}`, value: id } }] });
  await store.approvals.record({ fingerprint: "f1", decision: "approved", required_tier: "full_access", reviewer: "ops", decided_at: 1, expires_at: null });
  await store.postures.set("bot", "always_allow", "full_access", 1_000);
  const approvalSeal = (await sql("SELECT seal FROM car_approvals")).rows[0]!.seal as string;
  const posture = (await sql("SELECT posture, updated_at, seal FROM car_postures WHERE agent_id = 'bot'")).rows[0]!;
  const [approval] = await store.approvals.grants(Date.now());
  await store.approvals.revoke(approval!.id, "admin", 2_000);
  await store.postures.set("bot", "deny", "full_access", 3_000);
  await store.flush();
  expect((await store.enforceRetention(Date.now(), { mode: "truncate", max_events: 0, act: "clear" })).removed).toBeGreaterThan(0);
  return { store, sql, older: { approvalSeal, posture } };
}

async function brokenTable(store: PostgresStore): Promise<string | undefined> {
  const report = await store.verifyChain();
  return report.ok ? undefined : report.broken.table;
}

describe("PostgreSQL: rows whose events a cut removed", () => {
  it("verify intact after the cut, which is named", async () => {
    const { store } = await cutDatabase();
    expect(await store.verifyChain()).toMatchObject({ ok: true, cuts: [{ act: "clear" }] });
  });

  const edits: [string, string, (sql: Sql, older: Awaited<ReturnType<typeof cutDatabase>>["older"]) => Promise<unknown>][] = [
    [
      "an approval's older copy, its revocation deleted and its old seal restored",
      "approvals",
      async (sql, older) => {
        await sql("DELETE FROM car_revocations");
        await sql("UPDATE car_approvals SET seal = $1", [older.approvalSeal]);
      },
    ],
    [
      "a posture's older copy with its old seal",
      "postures",
      (sql, older) =>
        sql("UPDATE car_postures SET posture = $1, updated_at = $2, seal = $3 WHERE agent_id = 'bot'", [
          older.posture.posture,
          older.posture.updated_at,
          older.posture.seal,
        ]),
    ],
    ["a posture row deleted", "postures", (sql) => sql("DELETE FROM car_postures WHERE agent_id = 'bot'")],
    ["a proposal's status", "proposals", (sql) => sql("UPDATE car_proposals SET status = 'rolled_back' WHERE proposal_id = 'p1'")],
    [
      "a proposal row inserted",
      "proposals",
      (sql) => sql("INSERT INTO car_proposals (proposal_id, status, runtime_key, began_at) VALUES ('p9', 'committed', 1, 'x')"),
    ],
    ["a transition", "transitions", (sql) => sql(`UPDATE car_transitions SET mutation = '{"op":"set","value":"evil"}' WHERE key = 'k-p1'`)],
    ["a transition deleted", "transitions", (sql) => sql("DELETE FROM car_transitions WHERE key = 'k-p2'")],
    [
      "the cut's record of the rows rewritten to match an edit",
      "checkpoints",
      async (sql) => {
        await sql("UPDATE car_transitions SET key = 'k-p8' WHERE key = 'k-p1'");
        await sql("UPDATE car_meta SET value = replace(value, 'k-p1', 'k-p8') WHERE key = 'cut_rows'");
      },
    ],
    ["the cut's record of the rows deleted", "checkpoints", (sql) => sql("DELETE FROM car_meta WHERE key = 'cut_rows'")],
  ];
  for (const [what, table, edit] of edits)
    it(`reports ${what}`, async () => {
      const { store, sql, older } = await cutDatabase();
      await edit(sql, older);
      expect(await brokenTable(store)).toBe(table);
    });
});
