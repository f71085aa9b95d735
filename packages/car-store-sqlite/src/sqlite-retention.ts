/**
 * Retention for the SQLite log: pick the newest event to remove (by count
 * and/or age), archive what goes to a JSON-lines file (each line a full
 * stored event with its hashes, so the archive verifies on its own), delete
 * it and write a signed checkpoint naming the last removed event — the
 * anchor of the retained chain. The archive is written before the delete
 * commits, so a failure between the two can repeat lines in the archive but
 * never lose an event.
 */
import { appendFileSync } from "node:fs";
import { CarError, rfc3339 } from "@car/ir";
import { type CheckpointKey, costUsdOf, signCheckpoint, type SignedCheckpoint } from "@car/engine/durable";
export { validateRetention } from "@car/engine/durable";
import type { RetentionPolicy, RetentionResult } from "@car/engine";
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

/** Removes every event up to `cut` (inside the caller's transaction) and returns the signed checkpoint. */
export function removeThrough(db: SqliteDatabase, cut: number, policy: RetentionPolicy, key: CheckpointKey, now: number): RetentionResult {
  const anchor = chainAnchor(db);
  const events = (db.prepare(`SELECT ${SELECT_COLUMNS} FROM events WHERE seq <= ? ORDER BY seq`).all(cut) as EventRow[]).map(
    (row) => eventFromRow(row, anchor).event,
  );
  if (events.length === 0) return { removed: 0, checkpoint: null };
  const archivePath = policy.mode === "archive" ? policy.archive_path! : null;
  if (archivePath !== null) {
    const lines = events.map((event) => `${JSON.stringify(event)}\n`).join("");
    try {
      appendFileSync(archivePath, lines, { mode: 0o600 });
    } catch (error) {
      throw new CarError("storage_error", `cannot archive events to '${archivePath}': ${(error as Error).message}`, {}, { cause: error });
    }
  }
  const last = events[events.length - 1]!;
  const previous = db.prepare("SELECT signature FROM checkpoints ORDER BY id DESC LIMIT 1").pluck().get() as string | undefined;
  const signed: SignedCheckpoint = signCheckpoint(
    {
      seq: last.seq,
      hash: last.hash!,
      first_removed_seq: events[0]!.seq,
      removed: events.length,
      mode: policy.mode,
      archive_path: archivePath,
      act: policy.act ?? "retention",
      cost_usd: costUsdOf(events),
      created_at: rfc3339(now),
      previous: previous ?? null,
      key_id: key.id,
    },
    key,
  );
  db.prepare("DELETE FROM events WHERE seq <= ?").run(cut);
  db.prepare("INSERT INTO checkpoints (body, signature) VALUES (?, ?)").run(JSON.stringify(signed.checkpoint), signed.signature);
  return { removed: events.length, checkpoint: signed };
}

export function storedCheckpoints(db: SqliteDatabase): SignedCheckpoint[] {
  return (db.prepare("SELECT body, signature FROM checkpoints ORDER BY id").all() as { body: string; signature: string }[]).map((row) => ({
    checkpoint: JSON.parse(row.body) as SignedCheckpoint["checkpoint"],
    signature: row.signature,
  }));
}
