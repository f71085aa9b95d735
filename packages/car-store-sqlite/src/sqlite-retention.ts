/**
 * Retention for the SQLite log: pick the newest event to remove (by count
 * and/or age), archive what goes to a JSON-lines file (each line a full
 * stored event with its hashes, so the archive verifies on its own), delete
 * it and write a signed checkpoint naming the last removed event — the
 * anchor of the retained chain. The archive is written before the delete
 * commits, so a failure between the two can repeat lines in the archive but
 * never lose an event.
 */
import { archiveAndSignCut, type CheckpointKey, CUT_ROWS_KEY, cutRows, type SignedCheckpoint, type StoredTables } from "@car/engine/durable";
export { validateRetention } from "@car/engine/durable";
import type { CarEvent, RetentionPolicy, RetentionResult } from "@car/engine";
import type { SqliteDatabase } from "./schema.ts";
import { SELECT_COLUMNS, chainAnchor, eventFromRow } from "./event-row.ts";
import type { EventRow } from "./event-row.ts";

/** Trim a count-bounded log once it exceeds its bound by this fraction, so a checkpoint is written per trim, not per commit. */
const COUNT_SLACK = 0.1;

/** The seq of the newest event the policy removes, or undefined when nothing is due. `strict` ignores the count slack. */
export function retentionCut(db: SqliteDatabase, policy: RetentionPolicy, now: number, strict: boolean): number | undefined {
  const bounds = db.prepare("SELECT min(seq) AS first, max(seq) AS last FROM events").get() as { first: number | null; last: number | null };
  if (bounds.first === null || bounds.last === null) return undefined;
  let cut: number | undefined;
  if (policy.max_events !== undefined) {
    const count = bounds.last - bounds.first + 1;
    const limit = strict ? policy.max_events : policy.max_events + Math.floor(policy.max_events * COUNT_SLACK);
    if (count > limit) cut = bounds.last - policy.max_events;
  }
  if (policy.max_age_ms !== undefined) {
    const old = db
      .prepare("SELECT max(seq) FROM events WHERE ts < ?")
      .pluck()
      .get(now - policy.max_age_ms) as number | null;
    if (old !== null && (cut === undefined || old > cut)) cut = old;
  }
  return cut;
}

/**
 * Removes every event up to `cut` (inside the caller's transaction) and
 * returns the signed checkpoint, which records the trusted `tables` as the
 * cut leaves them (cut-rows.ts).
 */
export function removeThrough(
  db: SqliteDatabase,
  cut: number,
  policy: RetentionPolicy,
  key: CheckpointKey,
  now: number,
  tables: StoredTables,
): RetentionResult {
  const anchor = chainAnchor(db);
  const read = (where: string): CarEvent[] =>
    (db.prepare(`SELECT ${SELECT_COLUMNS} FROM events WHERE ${where} ORDER BY seq`).all(cut) as EventRow[]).map((row) => eventFromRow(row, anchor).event);
  const events = read("seq <= ?");
  if (events.length === 0) return { removed: 0, checkpoint: null };
  const previous = db.prepare("SELECT signature FROM checkpoints ORDER BY id DESC LIMIT 1").pluck().get() as string | undefined;
  const rows = cutRows(tables, read("seq > ?"));
  const signed = archiveAndSignCut(events, policy, previous, key, now, rows);
  db.prepare("DELETE FROM events WHERE seq <= ?").run(cut);
  db.prepare("INSERT INTO checkpoints (body, signature) VALUES (?, ?)").run(JSON.stringify(signed.checkpoint), signed.signature);
  // The record the checkpoint signs the digest of: the newest cut's only.
  db.prepare("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(CUT_ROWS_KEY, JSON.stringify(rows));
  return { removed: events.length, checkpoint: signed };
}

export function storedCheckpoints(db: SqliteDatabase): SignedCheckpoint[] {
  return (db.prepare("SELECT body, signature FROM checkpoints ORDER BY id").all() as { body: string; signature: string }[]).map((row) => ({
    checkpoint: JSON.parse(row.body) as SignedCheckpoint["checkpoint"],
    signature: row.signature,
  }));
}
