/**
 * Agent run traces (reference websocket-core.md § runs): a run is one
 * `runs.start` / `runs.complete` bracket around an agent loop, keyed by a
 * durable `run_id` independent of any connection. Its records — `started`,
 * then model and action turns, then `ended` — are kept by the store so a
 * trace survives reconnects and restarts and replays exactly as it streamed.
 *
 * The store owns the turn index and the run's status: an append stamps each
 * turn's `index` from the run's live turn count and refuses (never partly
 * admits) a batch on a terminal run or one that would pass the ceiling, in
 * one atomic step, so pipelined batches cannot race past either.
 */
import type { JsonObject } from "@car/ir";

type MaybePromise<T> = T | Promise<T>;

/** The most turns (model and action) one run may hold: a runaway-loop backstop far above a healthy run. */
export const RUN_TURN_CEILING = 2000;

/** `in_progress` until the run ends: reported (`completed`), abandoned (`incomplete`) or stopped (`cancelled`). */
export type RunStatus = "in_progress" | "completed" | "incomplete" | "cancelled";

/** A run as `runs.list` reports it. Times are RFC 3339. */
export interface RunSummary {
  run_id: string;
  agent_id: string;
  intent: string;
  started_at: string;
  ended_at?: string;
  status: RunStatus;
  /** Model and action turns recorded. */
  turn_count: number;
}

/** Where a page of `listPage` ends: its last run's sort key. */
export interface RunPageKey {
  started_at: string;
  run_id: string;
}

/** Whether `a` sorts before `b` in the paging order (newest first, then the greater run id first). */
export function runPageBefore(a: RunPageKey, b: RunPageKey): boolean {
  return a.started_at > b.started_at || (a.started_at === b.started_at && a.run_id > b.run_id);
}

/** What opens a run: its `started` record (with `record: "started"`) and the summary fields. */
export interface RunStart {
  run_id: string;
  agent_id: string;
  intent: string;
  /** RFC 3339. */
  started_at: string;
  /** The whole `started` record, stored as the trace's first record. */
  record: JsonObject;
}

/** Why an append recorded nothing; the caller stops sending for the run. */
export type RunAppendDrop = "run_not_found" | "run_terminal" | "run_turn_limit";

export type RunAppendOutcome =
  | { ok: true; base_index: number; count: number /** The records as stored, `index` stamped. */; records: JsonObject[]; turn_count: number }
  | { ok: false; dropped: RunAppendDrop };

/** Why an end recorded nothing. */
export type RunEndRefusal = "run_not_found" | "run_terminal";

export type RunEndOutcome = { ok: true; summary: RunSummary; record: JsonObject } | { ok: false; refused: RunEndRefusal };

export interface RunStore {
  /**
   * Opens a run, or — when `run_id` is already taken (an idempotent retry) —
   * returns that run untouched with `created: false`.
   */
  start(run: RunStart): MaybePromise<{ summary: RunSummary; created: boolean }>;
  /**
   * Appends turns (each a record without `index`) in order, stamping
   * `index` from the run's turn count, unless the run is unknown, terminal,
   * or would pass `ceiling` turns: then nothing is appended.
   */
  appendTurns(run_id: string, turns: readonly JsonObject[], ceiling: number): MaybePromise<RunAppendOutcome>;
  /** Appends the `ended` record and sets the terminal status, unless the run is unknown or already terminal. */
  end(run_id: string, record: JsonObject, status: Exclude<RunStatus, "in_progress">, ended_at: string): MaybePromise<RunEndOutcome>;
  get(run_id: string): MaybePromise<RunSummary | undefined>;
  /** The agent's runs, newest first. */
  list(agent_id: string): MaybePromise<RunSummary[]>;
  /**
   * One page of the agent's runs in the paging order (`started_at`, then
   * `run_id`, both descending — a total order every store sorts the same
   * way), strictly after `after` (the last run of the previous page), at most
   * `limit`. Runs opened meanwhile never shift a page already read.
   */
  listPage(agent_id: string, after: RunPageKey | undefined, limit: number): MaybePromise<RunSummary[]>;
  /** The run's records in order from position `from` (0: the `started` record), at most `limit` of them. */
  records(run_id: string, from: number, limit?: number): MaybePromise<JsonObject[]>;
}

/** The summary of a run row: `ended_at` only once terminal. */
export function runSummary(row: Omit<RunSummary, "ended_at"> & { ended_at?: string | null | undefined }): RunSummary {
  const summary: RunSummary = {
    run_id: row.run_id,
    agent_id: row.agent_id,
    intent: row.intent,
    started_at: row.started_at,
    status: row.status,
    turn_count: Number(row.turn_count),
  };
  if (row.ended_at !== null && row.ended_at !== undefined) summary.ended_at = row.ended_at;
  return summary;
}

/** Stamps the run's turn positions on a batch: the daemon owns the index, whatever the client sent. */
export function stampTurns(turns: readonly JsonObject[], base: number): JsonObject[] {
  return turns.map((turn, i) => ({ ...turn, index: base + i }));
}
