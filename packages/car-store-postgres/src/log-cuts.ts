/**
 * Cutting the PostgreSQL log (DECISIONS §24): retention, `events.truncate`
 * and `events.clear` are operator acts on the record. Under the log head's
 * lock (no runtime appends meanwhile) the cut archives what goes to a
 * JSON-lines file when asked (each line a full stored event with its
 * hashes), deletes it and stores a signed checkpoint naming the act, the
 * last removed event (the retained chain's anchor) and the checkpoint
 * before it — so verification reports every cut rather than "intact" over
 * a shorter log. The archive is written before the delete commits: a
 * failure between the two can repeat lines in it but never lose an event.
 */
import { randomBytes } from "node:crypto";
import type { RetentionPolicy, RetentionResult } from "@car/engine";
import {
  archiveAndSignCut,
  type AuditKey,
  type CheckpointKey,
  checkpointKey,
  CUT_ROWS_KEY,
  cutRows,
  parseHexKey,
  type SignedCheckpoint,
  type StoredTables,
} from "@car/engine/durable";
import type { PoolClient } from "pg";
import { eventFromRow } from "./event-sql.ts";

/** Every checkpoint, oldest first. */
export async function storedCheckpoints(client: PoolClient): Promise<SignedCheckpoint[]> {
  const { rows } = await client.query<{ body: string; signature: string }>("SELECT body, signature FROM car_checkpoints ORDER BY id");
  return rows.map((row) => ({ checkpoint: JSON.parse(row.body) as SignedCheckpoint["checkpoint"], signature: row.signature }));
}

/**
 * The key checkpoints are signed with: the audit key, else one kept in the
 * database (`car_meta.checkpoint_key`, created on first need when `create`),
 * which shows accidental damage only — as the SQLite store does.
 */
export async function checkpointKeyOf(client: PoolClient, auditKey: AuditKey | undefined, create: boolean): Promise<CheckpointKey | undefined> {
  if (auditKey !== undefined) return auditKey;
  const read = async (): Promise<string | undefined> =>
    (await client.query<{ value: string }>("SELECT value FROM car_meta WHERE key = 'checkpoint_key'")).rows[0]?.value;
  let stored = await read();
  if (stored === undefined && create) {
    await client.query("INSERT INTO car_meta (key, value) VALUES ('checkpoint_key', $1) ON CONFLICT (key) DO NOTHING", [randomBytes(32).toString("hex")]);
    stored = await read();
  }
  return stored === undefined ? undefined : checkpointKey(parseHexKey(stored, "the database"));
}

/** The seq of the newest event `policy` removes, or undefined when nothing is due (read under the head's lock). */
async function cutThrough(client: PoolClient, policy: RetentionPolicy, now: number): Promise<number | undefined> {
  const bounds = (await client.query<{ first: string | null; last: string | null }>("SELECT min(seq)::text AS first, max(seq)::text AS last FROM car_events"))
    .rows[0]!;
  if (bounds.first === null || bounds.last === null) return undefined;
  const [first, last] = [Number(bounds.first), Number(bounds.last)];
  let cut: number | undefined;
  if (policy.max_events !== undefined && last - first + 1 > policy.max_events) cut = last - policy.max_events;
  if (policy.max_age_ms !== undefined) {
    const { rows } = await client.query<{ seq: string | null }>(
      "SELECT max(seq)::text AS seq FROM car_events WHERE ts < to_timestamp($1::double precision / 1000)",
      [now - policy.max_age_ms],
    );
    const old = rows[0]!.seq === null ? undefined : Number(rows[0]!.seq);
    if (old !== undefined && (cut === undefined || old > cut)) cut = old;
  }
  return cut;
}

/**
 * Applies `policy` (validated by the caller) in `client`'s transaction;
 * returns what was removed and the checkpoint left, which records the
 * trusted tables (`readTables`, read under the head's lock) as the cut
 * leaves them (cut-rows.ts).
 */
export async function cutLog(
  client: PoolClient,
  policy: RetentionPolicy,
  auditKey: AuditKey | undefined,
  now: number,
  readTables: (client: PoolClient) => Promise<StoredTables>,
): Promise<RetentionResult> {
  // The head's lock: no runtime appends while the cut is taken, so the retained chain starts right after it.
  await client.query("SELECT seq FROM car_log_head WHERE id = 1 FOR UPDATE");
  const cut = await cutThrough(client, policy, now);
  if (cut === undefined) return { removed: 0, checkpoint: null };
  const read = async (where: string) =>
    (await client.query<{ body: string; hash: string }>(`SELECT body, hash FROM car_events WHERE ${where} ORDER BY seq`, [cut])).rows.map(eventFromRow);
  const events = await read("seq <= $1");
  if (events.length === 0) return { removed: 0, checkpoint: null };
  const key = (await checkpointKeyOf(client, auditKey, true))!;
  const previous = (await client.query<{ signature: string }>("SELECT signature FROM car_checkpoints ORDER BY id DESC LIMIT 1")).rows[0]?.signature;
  const rows = cutRows(await readTables(client), await read("seq > $1"));
  const signed = archiveAndSignCut(events, policy, previous, key, now, rows);
  await client.query("DELETE FROM car_events WHERE seq <= $1", [cut]);
  await client.query("INSERT INTO car_checkpoints (body, signature) VALUES ($1, $2)", [JSON.stringify(signed.checkpoint), signed.signature]);
  // The record the checkpoint signs the digest of: the newest cut's only.
  await client.query("INSERT INTO car_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [
    CUT_ROWS_KEY,
    JSON.stringify(rows),
  ]);
  return { removed: events.length, checkpoint: signed };
}
