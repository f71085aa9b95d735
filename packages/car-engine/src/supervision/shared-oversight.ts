/**
 * Oversight shared by several servers on one database (issue #38 §5): a
 * supervisor connected to any server sees the intents parked on every one
 * and its decision lands where the proposal waits; an approval recorded
 * anywhere wakes the waits everywhere; host events reach every subscriber.
 *
 * A host without one (in memory, SQLite) keeps everything in its own
 * process. A database store that offers one (PostgreSQL) keeps the parked
 * intents, their decisions and the subscribers in tables, and sends
 * wake-ups between servers. A wake-up only says "look again": what a
 * decision is, is read from the table (sealed under the audit key), never
 * from the message, so whoever can send one cannot decide anything by it.
 */
import type { JsonObject } from "@car/ir";
import type { WaitingApproval } from "./approval-waits.ts";
import type { SupervisionDecision } from "./supervisor.ts";

/** A parked intent as every server sharing the database sees it. */
export interface SharedIntentRow {
  id: string;
  /** The server that parks the proposal: the only one that releases it. */
  server_id: string;
  /** The submitting agent, for a filter's `sessions` (the intent itself names only its source). */
  agent_id: string | null;
  /** The trimmed, value-free intent as supervisors are shown it. */
  intent: JsonObject;
  /** Set once, by the first decision to land (a supervisor's, or the parking server's timeout or cancellation). */
  decision: SupervisionDecision | undefined;
}

/** A subscriber registered on some server: a supervisor (`supervision.subscribe`, with its filter) or a `host.subscribe`r. */
export interface SharedSubscriber {
  server_id: string;
  subscriber_id: string;
  kind: "supervision" | "host";
  /** The supervisor's filter as `supervision.subscribe` echoes it (`{}` for a host subscriber). */
  filter: JsonObject;
}

/** What the other servers tell this one. Each is a wake-up: the receiver reads the tables again. */
export interface OversightWakeups {
  /** Another server parked an intent. */
  intentParked(id: string): void;
  /** Someone decided an intent (or claims to: read the row). */
  intentDecided(id: string): void;
  /** A decision on `fingerprint` was recorded in the approval ledger. */
  approvalRecorded(fingerprint: string): void;
  /** A host event raised on another server (authenticated under the audit key, so it was sent by a holder of the key). */
  hostEvent(event: JsonObject): void;
  /** The subscribers changed somewhere. */
  subscribersChanged(): void;
  /** The channel was lost and is back: anything may have been missed, so everything is read again. */
  resync(): void;
}

export interface SharedOversight {
  /** This server's id among those sharing the database. */
  readonly serverId: string;
  /** Starts listening; resolves once wake-ups are being received. */
  start(wakeups: OversightWakeups): Promise<void>;
  /** Tells the other servers' host subscribers (bounded: an event too large to send is sent without its details). */
  publishHostEvent(event: JsonObject): void;
  setSubscriber(subscriber: Omit<SharedSubscriber, "server_id">): Promise<void>;
  removeSubscriber(subscriber_id: string): Promise<void>;
  /** Every live server's subscribers (a server that is gone is swept). */
  subscribers(): Promise<SharedSubscriber[]>;
  /** Stores an intent this server parks, deciding by itself at `deadline` (ms since the epoch) at the latest. */
  park(row: Omit<SharedIntentRow, "server_id" | "decision">, deadline: number): Promise<void>;
  /**
   * Records the first decision on an undecided intent; returns the row as
   * decided, or undefined when it is not waiting (unknown, decided, past its
   * deadline). `atDeadline`: the parking server's own timeout or
   * cancellation, which the deadline does not stop.
   */
  decide(id: string, decision: SupervisionDecision, options?: { atDeadline?: boolean }): Promise<SharedIntentRow | undefined>;
  /** The row as stored; a decision whose seal does not match reads as a `deny` by `server`. */
  read(id: string): Promise<SharedIntentRow | undefined>;
  /** Every intent still waiting on a live server, oldest first. */
  pending(): Promise<SharedIntentRow[]>;
  /** Lists an approval wait of this server for every server's `permission.pending` (what it lists: no parameter value). */
  addWait(wait: WaitingApproval): Promise<void>;
  removeWait(id: string): Promise<void>;
  /** Every live server's approval waits, oldest first. */
  waits(): Promise<WaitingApproval[]>;
  /** Stops listening and removes this server's subscribers. */
  close(): Promise<void>;
}

/** A store that can share oversight between the servers using it. */
export interface SharesOversight {
  sharedOversight(): SharedOversight;
}

export function sharesOversight(store: unknown): store is SharesOversight {
  return typeof (store as Partial<SharesOversight> | null)?.sharedOversight === "function";
}
