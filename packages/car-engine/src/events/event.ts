/**
 * Audit events as plain JSON records (snake_case), so a durable backend can
 * store them verbatim and hash-chain them over their JCS form. `hash` and
 * `prev_hash` are left to such a backend; the in-memory log leaves them out.
 */
import type { JsonObject } from "@car/ir";

import type { EventKind } from "./event-kinds.ts";

export { EVENT_KINDS, type EngineEventKind, type EventKind } from "./event-kinds.ts";

/** One audit record. */
export interface CarEvent {
  /** Position in the log, from 1, strictly increasing. */
  seq: number;
  kind: EventKind;
  /** The proposal (or multi-agent run) the event belongs to; null when it belongs to none. */
  proposal_id: string | null;
  action_id?: string;
  /** RFC 3339. */
  timestamp: string;
  data: JsonObject;
  /** SHA-256 of this event's JCS form (durable backends). */
  hash?: string;
  /** The previous event's `hash` (durable backends). */
  prev_hash?: string;
}

/** What a writer hands to `EventLog.append`: the log assigns `seq` (and, if it chains, the hashes). */
export type NewEvent = Omit<CarEvent, "seq" | "hash" | "prev_hash">;

/** A conjunction of filters; every field is optional. */
export interface EventQuery {
  kinds?: readonly EventKind[];
  proposal_id?: string;
  action_id?: string;
  /** RFC 3339, inclusive. */
  since?: string;
  /** RFC 3339, exclusive. */
  until?: string;
  /** Events whose `data[key]` equals each given string. */
  data_matches?: Readonly<Record<string, string>>;
  /** Only events with `seq` greater than this (resume a feed). */
  after_seq?: number;
  /** `asc` (default, oldest first) or `desc` (most recent first). */
  order?: "asc" | "desc";
  /** At most this many events (after ordering); 0 or absent = no limit. */
  limit?: number;
}
