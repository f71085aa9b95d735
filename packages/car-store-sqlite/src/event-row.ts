/**
 * The stored event row (schema version 3): each fact once. The envelope is in
 * columns, `data` is its JCS text, `hash` and `mac` are 32-byte BLOBs, and
 * neither `prev_hash` (the previous row's `hash`) nor a timestamp that is the
 * ISO form of `ts` is stored again. The hashed text (event-hash.ts) is
 * rebuilt from the columns when the chain is verified, so an edit of any
 * column changes the text whose SHA-256 must equal `hash`.
 *
 * Version 2 stored the whole canonical text in `body` beside the same facts
 * in columns and hex hashes: about twice the bytes per event written in
 * every commit (lean-events-migration.ts converts it).
 */
import { rfc3339 } from "@car/ir";
import type { CarEvent } from "@car/engine";
import { type AuditKey, canonicalEventText, eventMac, GENESIS_HASH, type StoredEventRow, type UnhashedEvent } from "@car/engine/durable";
import type { SqliteDatabase } from "./schema.ts";
import { cachedStatement } from "./statement-cache.ts";

/** The version-3 events table and its indexes (a migration creates them under this name). */
export const EVENTS_TABLE = `CREATE TABLE events (
     seq INTEGER PRIMARY KEY,
     kind TEXT NOT NULL,
     proposal_id TEXT,
     action_id TEXT,
     ts INTEGER NOT NULL,
     stamp TEXT,
     data TEXT NOT NULL,
     hash BLOB NOT NULL,
     mac BLOB
   ) STRICT;
   CREATE INDEX events_by_proposal ON events (proposal_id, seq);
   CREATE INDEX events_by_time ON events (ts);`;

/** Columns an INSERT binds, in order (`bindEvent`). */
export const INSERT_COLUMNS = "seq, kind, proposal_id, action_id, ts, stamp, data, hash, mac";
export const COLUMN_COUNT = 9;

/** What a SELECT reads (`eventFromRow`): the columns and the previous row's hash, a primary-key lookup. */
export const SELECT_COLUMNS = `${INSERT_COLUMNS}, (SELECT p.hash FROM events AS p WHERE p.seq = events.seq - 1) AS prev`;

/** One row as `SELECT_COLUMNS` reads it. */
export interface EventRow {
  seq: number;
  kind: string;
  proposal_id: string | null;
  action_id: string | null;
  ts: number;
  /** The event's timestamp text, when it is not `rfc3339(ts)`; else null. */
  stamp: string | null;
  data: string;
  hash: Buffer;
  mac: Buffer | null;
  /** The previous row's hash; null for the first row (or when it was removed). */
  prev: Buffer | null;
}

/** Where the stored chain starts: the newest retention checkpoint's event, or seq 0 with the genesis hash. */
export interface ChainAnchor {
  seq: number;
  hash: string;
}

export function chainAnchor(db: SqliteDatabase): ChainAnchor {
  const row = cachedStatement(
    db,
    "SELECT json_extract(body, '$.seq') AS seq, json_extract(body, '$.hash') AS hash FROM checkpoints ORDER BY id DESC LIMIT 1",
  ).get() as { seq: unknown; hash: unknown } | undefined;
  return row !== undefined && typeof row.seq === "number" && typeof row.hash === "string" ? { seq: row.seq, hash: row.hash } : { seq: 0, hash: GENESIS_HASH };
}

/** `ts` and `stamp` of a timestamp; consecutive events mostly share one (the engine stamps once per millisecond), so the last is kept. */
function timeColumns(timestamp: string): void {
  if (timestamp === lastStamp) return;
  const t = Date.parse(timestamp);
  lastStamp = timestamp;
  lastTime = Number.isFinite(t) ? t : 0;
  lastKept = Number.isFinite(t) && rfc3339(t) === timestamp ? null : timestamp;
}
let lastStamp = "";
let lastTime = 0;
let lastKept: string | null = "";

/** The timestamp a row stands for; null when `ts` has no ISO form (out of range: an edited row). */
function timestampOf(ts: number, stamp: string | null): string | null {
  if (stamp !== null) return stamp;
  if (ts === readTime) return readStamp;
  const date = new Date(ts);
  if (Number.isNaN(date.getTime())) return null;
  readTime = ts;
  readStamp = date.toISOString();
  return readStamp;
}
let readTime = Number.NaN;
let readStamp = "";

/** Writes the row of a linked `event` (its `data` JCS text from `linkEvent`) into `params` from `at`. */
export function bindEvent(params: unknown[], at: number, event: CarEvent, data: string, macKey: AuditKey | undefined): void {
  timeColumns(event.timestamp);
  const hash = event.hash!;
  params[at] = event.seq;
  params[at + 1] = event.kind;
  params[at + 2] = event.proposal_id;
  params[at + 3] = event.action_id ?? null;
  params[at + 4] = lastTime;
  params[at + 5] = lastKept;
  params[at + 6] = data;
  params[at + 7] = Buffer.from(hash, "hex");
  params[at + 8] = macKey === undefined ? null : Buffer.from(eventMac(macKey, hash), "hex");
}

/**
 * The event a row stands for. `withText`: also the hashed text rebuilt from
 * the stored columns, `data` verbatim, for the verifier to compare with the
 * canonical form (an edit of `data` that keeps its JSON meaning shows too).
 */
export function eventFromRow(row: EventRow, anchor: ChainAnchor, withText = false): StoredEventRow {
  const hash = row.hash.toString("hex");
  // A missing predecessor is a break the verifier names; only the chain's first event links to the anchor.
  const prev = row.prev !== null ? row.prev.toString("hex") : row.seq === anchor.seq + 1 ? anchor.hash : "";
  const timestamp = timestampOf(row.ts, row.stamp);
  const mac = row.mac === null ? null : row.mac.toString("hex");
  let data: CarEvent["data"];
  try {
    data = JSON.parse(row.data) as CarEvent["data"];
  } catch {
    const event: CarEvent = { seq: row.seq, kind: row.kind, proposal_id: row.proposal_id, timestamp: timestamp ?? "", data: {}, prev_hash: prev, hash };
    return { event, mac, problem: "the stored event is not valid JSON" };
  }
  const event: CarEvent = {
    seq: row.seq,
    kind: row.kind,
    proposal_id: row.proposal_id,
    ...(row.action_id !== null ? { action_id: row.action_id } : {}),
    timestamp: timestamp ?? "",
    data,
    prev_hash: prev,
    hash,
  };
  const problem =
    timestamp === null
      ? "the time column is out of range"
      : row.stamp !== null && (Date.parse(row.stamp) || 0) !== row.ts
        ? "the time column disagrees with the stored event"
        : undefined;
  if (problem !== undefined) return { event, mac, problem };
  if (!withText) return { event, mac };
  let stored: string;
  try {
    stored = canonicalEventText(event as UnhashedEvent, row.data);
  } catch {
    return { event, mac, problem: "the event has no canonical form" };
  }
  return { event, mac, stored };
}
