/**
 * Every event kind any part of the engine writes, in one table, with the
 * shape of its `data` (`EventData`). A reader of the log (a report, a
 * store, a transport) looks here for what a kind means and carries; a
 * writer takes its kind from here, so no folder keeps a table of its own.
 */
import type { JsonObject, JsonValue } from "@car/ir";

/** The kinds one proposal's run writes, in the order a run can write them. */
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

/** The compensation phase's kinds, under the proposal id (`compensation/`). */
export const COMPENSATION_EVENTS = {
  planned: "compensation_planned",
  started: "compensation_started",
  succeeded: "compensation_succeeded",
  failed: "compensation_failed",
  completed: "compensation_completed",
} as const;

/** The kinds a multi-agent run writes; `proposal_id` is the run id, `action_id` the call id. */
export const MULTI_EVENT_KINDS = {
  runStarted: "multi_run_started",
  runCompleted: "multi_run_completed",
  agentStarted: "agent_started",
  agentFinished: "agent_finished",
  agentFailed: "agent_failed",
  /** An agent the run did not start: budget spent, run cancelled, or an upstream stage failed. */
  agentSkipped: "agent_skipped",
} as const;

/** The planner's kinds; `proposal_id` is the loop's `run_id`. */
export const PLANNER_EVENT_KINDS = {
  started: "planner_started",
  attempt: "planner_attempt",
  completed: "planner_completed",
} as const;

/** The event that carries an agent's session-scoped trace steps: `data.agent` and `data.steps` (`trace/agent-sessions.ts`). */
export const SESSION_TRACE_EVENT = "session_trace";

export type EngineEventKind = (typeof EVENT_KINDS)[keyof typeof EVENT_KINDS];
/** An engine kind or any other package's kind (e.g. `agent_started`). */
export type EventKind = EngineEventKind | (string & {});

type Tier = string;

/** What `action_succeeded` and `action_failed` say of the call: a digest of its parameters (never the values), its declared effects, its tool. */
export interface ActionDigest {
  params_digest: string;
  expected_effects: JsonObject;
  tool?: string;
  tool_source?: string;
}

/**
 * The `data` each kind carries. Optional fields are omitted when they do not
 * apply; `compensation: true` marks a gate's event about a compensation step.
 * Every event a proposal's run writes — the `EVENT_KINDS` and
 * `COMPENSATION_EVENTS` kinds, and `proposal_interrupted` written for it on
 * recovery — also carries the run's `run_id` (DECISIONS §20), added by the
 * run's writer (`run/run-events.ts`) rather than listed per kind. A log
 * written by an older build may hold events without it.
 */
export interface EventData {
  proposal_received: { proposal: JsonObject };
  action_validated: Record<string, never>;
  /** `stage`: admission, dependency, state_dependency, precondition, reference, policy, approval, schema. */
  action_rejected: { reason: string; stage: string };
  action_started: { type: string; tool?: string; tool_source?: string };
  action_retrying: { attempt: number; delay_ms: number; error: string | null };
  action_waiting: { reason: "rate_limit"; wait_ms: number; tool: string };
  action_succeeded: ActionDigest & { cached?: true };
  action_failed: ActionDigest & { error_class: string; error: string; terminal?: true; skipped?: true };
  action_skipped: { reason: string; compensation_action?: true };
  dispatch_intent: { attempt: number; tool: string };
  attempt_failed: { attempt: number; error_class: string; duration_ms: number; terminal?: true };
  policy_violation: { policy_name: string; reason: string; compensation?: true };
  approval_requested: { fingerprint: string; required: Tier; granted: Tier; tool?: string; stage?: "admission"; compensation?: true };
  approval_decided: {
    decision: "allow" | "needs_approval" | "deny";
    required: Tier;
    granted: Tier;
    fingerprint: string;
    reason?: string;
    wait_ms?: number;
    reviewer?: string;
    stage?: "admission";
    compensation?: true;
  };
  supervision_parked: JsonObject;
  supervision_decided: JsonObject;
  state_changed: { key: string; op: "set" | "delete"; value?: JsonValue; version: number };
  proposal_rolled_back: { reason: string; discarded_writes: number };
  proposal_completed: { outcome: "committed" | "rolled_back" | "rejected"; cost: JsonObject; reason?: string; external_effects_undone?: false };
  transaction_warning: { mode: string; keys: string[]; conflicts: JsonValue[] };
  commit_refused: { code: "stale_read" | "write_conflict" | "budget_exceeded"; keys: string[]; reason: string };
  proposal_interrupted: JsonObject;
  /** `references`: each distinct `$id.output` reference the steps' parameters hold, with its value (recorded once). */
  compensation_planned: { steps: JsonObject[]; not_undoable: { action_id: string; reason: string }[]; references?: JsonObject };
  compensation_started: { tool: string | null; compensation_action?: string };
  compensation_succeeded: Record<string, never>;
  compensation_failed: { error: string; terminal?: true };
  compensation_completed: { compensated: string[]; not_undone: { action_id: string; reason: string }[]; external_effects_undone: boolean };
  multi_run_started: { pattern: string; task: string; agents: string[]; limits: JsonObject } & JsonObject;
  multi_run_completed: { pattern: string; agent_calls: number; failed_calls: number; cut_off: number; has_answer: boolean; duration_ms: number };
  /**
   * A task over `TASK_HEAD_CHARS` (4,096) characters is recorded as its first 4,096 in `task`, with
   * `task_bytes` (its UTF-8 length) and `task_sha256` (hex digest of its UTF-8): a reducer's task can be tens of MiB.
   */
  agent_started: { agent: string; step: string; task: string; task_bytes?: number; task_sha256?: string };
  /** An answer over `TASK_HEAD_CHARS` characters is recorded likewise: its head in `answer`, with `answer_bytes` and `answer_sha256`. */
  agent_finished: {
    agent: string;
    step: string;
    answer: JsonValue;
    answer_bytes?: number;
    answer_sha256?: string;
    turns: number;
    tool_calls: number;
    duration_ms: number;
  } & JsonObject;
  agent_failed: { agent: string; step: string; reason: string; error: JsonValue };
  agent_skipped: { agent: string; step: string; reason: string; detail: string };
  planner_started: { max_attempts: number; target: JsonObject };
  planner_attempt: { attempt: number; verdict: string; candidates: number } & JsonObject;
  planner_completed: { outcome: "succeeded" | "exhausted"; attempts: number };
  session_trace: { agent: string; steps: JsonObject[] };
}

/** The `data` of an event of kind `K`: its shape in `EventData`, or any JSON object for another package's kind. */
export type EventDataOf<K extends string> = K extends keyof EventData ? EventData[K] : JsonObject;
