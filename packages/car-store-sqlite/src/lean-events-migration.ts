/**
 * Schema version 2 → 3: the events table to the lean row (event-row.ts),
 * inside the migration's one transaction. The hash chain is untouched —
 * every hash covers the same canonical text as before, so the chain, its
 * recorded head, retention checkpoints and anchors kept outside the
 * database all still verify.
 *
 * A version-2 row kept the hashed text in `body`. Its `data` is cut out of
 * that text verbatim when the text is the canonical form of what it says;
 * the envelope columns are carried over as they were. A row whose body is
 * not canonical (edited) keeps its whole body as `data`, so its hash no
 * longer matches and verification still reports the edit rather than the
 * migration hiding it; likewise an edited column disagrees with the hash.
 */
import { canonicalEventText, type UnhashedEvent } from "@car/engine/durable";
import { EVENTS_TABLE, INSERT_COLUMNS } from "./event-row.ts";
import type { SqliteDatabase } from "./schema.ts";

/** Rows read per step: better-sqlite3 cannot insert while a read is still iterating. */
const STEP = 5_000;

interface OldRow {
  seq: number;
  kind: string;
  proposal_id: string | null;
  action_id: string | null;
  ts: number;
  body: string;
  hash: string;
  mac: string | null;
}

/**
 * The canonical text of `data` inside a version-2 body, and its timestamp;
 * `data` is the whole body when the body is not the canonical form of the
 * event it parses to.
 */
function leanParts(body: string): { data: string; timestamp: string | null } {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(body) as Record<string, unknown>;
  } catch {
    return { data: body, timestamp: null };
  }
  const timestamp = typeof parsed["timestamp"] === "string" ? parsed["timestamp"] : null;
  let around: string;
  try {
    // NUL never appears in JCS text (control characters are escaped), so it marks where `data` goes.
    around = canonicalEventText({ ...(parsed as unknown as UnhashedEvent), data: {} }, "\u0000");
  } catch {
    return { data: body, timestamp };
  }
  const at = around.indexOf("\u0000");
  const before = around.slice(0, at);
  const after = around.slice(at + 1);
  const data =
    body.length > before.length + after.length && body.startsWith(before) && body.endsWith(after) ? body.slice(at, body.length - after.length) : body;
  return { data, timestamp };
}

/** Rebuilds `events` in the version-3 row; runs inside the migration transaction. */
export function migrateToLeanEvents(db: SqliteDatabase): void {
  db.exec("ALTER TABLE events RENAME TO events_v2; DROP INDEX events_by_proposal; DROP INDEX events_by_time;");
  db.exec(EVENTS_TABLE);
  const read = db.prepare(`SELECT seq, kind, proposal_id, action_id, ts, body, hash, mac FROM events_v2 WHERE seq > ? ORDER BY seq LIMIT ${STEP}`);
  const insert = db.prepare(`INSERT INTO events (${INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  let after = Number.MIN_SAFE_INTEGER;
  for (;;) {
    const rows = read.all(after) as OldRow[];
    if (rows.length === 0) break;
    for (const row of rows) {
      const lean = leanParts(row.body);
      // The stamp is kept unless it is exactly the ISO form of ts (the row then rebuilds it).
      const iso = Number.isFinite(row.ts) && Math.abs(row.ts) <= 8.64e15 ? new Date(row.ts).toISOString() : null;
      const stamp = lean.timestamp !== null && lean.timestamp === iso ? null : (lean.timestamp ?? "");
      insert.run(
        row.seq,
        row.kind,
        row.proposal_id,
        row.action_id,
        row.ts,
        stamp,
        lean.data,
        Buffer.from(row.hash, "hex"),
        row.mac === null ? null : Buffer.from(row.mac, "hex"),
      );
    }
    after = rows[rows.length - 1]!.seq;
  }
  db.exec("DROP TABLE events_v2");
}
