/**
 * Audit events as plain JSON records (snake_case), so a durable backend can
 * store them verbatim and hash-chain them over their JCS form. `hash` and
 * `prev_hash` are left to such a backend; the in-memory log leaves them out.
 */
import type { JsonObject } from "@car/ir";

/** The event kinds the engine writes. Other packages (multi-agent runs, approvals) add their own strings. */
export const EVENT_KINDS = {
  proposalReceived: "proposal_received",
  actionValidated: "action_validated",
  actionRejected: "action_rejected",
  actionStarted: "action_started",
  /** A failed attempt will be retried after `delay_ms` (`attempt` is the one about to start). */
  actionRetrying: "action_retrying",
  /** The action waits before dispatch: `reason` is `rate_limit` (with `wait_ms`). */
  actionWaiting: "action_waiting",
  actionSucceeded: "action_succeeded",
  actionFailed: "action_failed",
  actionSkipped: "action_skipped",
  /**
   * Written durably just before a tool is called (durable logs only), so
   * after a crash recovery can list the actions whose external effects may
   * have happened.
   */
  dispatchIntent: "dispatch_intent",
  /** One dispatched attempt of a tool call failed: attempt number, error class, duration (never the parameters). */
  attemptFailed: "attempt_failed",
  policyViolation: "policy_violation",
  /**
   * The approval gate asks its approver about an action and waits: fingerprint,
   * `required` / `granted` tier, `tool` (never parameter values). The
   * `approval_decided` that follows closes the wait.
   */
  approvalRequested: "approval_requested",
  /**
   * The approval gate's verdict on an action (allow / needs_approval / deny),
   * with the tiers; after an `approval_requested`, also `wait_ms` and `reviewer`.
   */
  approvalDecided: "approval_decided",
  /**
   * A supervisor parked the proposal at admission: the intent's id, the
   * action ids, types, tools, reversibility, parameter key names and a
   * digest of the parameters — never a value.
   */
  supervisionParked: "supervision_parked",
  /** The parked proposal's verdict (`allow` / `deny` / `escalate`), `reviewer`, `reason` and `wait_ms`. */
  supervisionDecided: "supervision_decided",
  stateChanged: "state_changed",
  proposalRolledBack: "proposal_rolled_back",
  proposalCompleted: "proposal_completed",
  /** Conflicts a `warn` transaction check let through (at admission, or at a PostgreSQL commit). */
  transactionWarning: "transaction_warning",
  /** The store refused the proposal's commit (a conflict): names the code and keys; its changes never landed. */
  commitRefused: "commit_refused",
  /** Written by a durable backend on restart for a proposal that was executing when the process died. */
  proposalInterrupted: "proposal_interrupted",
} as const;

export type EngineEventKind = (typeof EVENT_KINDS)[keyof typeof EVENT_KINDS];
/** An engine kind or any other package's kind (e.g. `agent_started`). */
export type EventKind = EngineEventKind | (string & {});

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
