/**
 * What each action came to — status, output, error, state changes,
 * duration, timestamp — with the audit event recording it, and the
 * `ProposalResult` assembled from them. A rejection or a failure that is
 * not skipped aborts the run; the run's scheduler decides what follows.
 */
import { emptyMap, getOwn, paramsDigest, setOwn } from "@car/ir";
import type { Action, ActionResult, ActionStatus, Clock, CostSummary, JsonObject, JsonValue, ProposalResult, StateMutation } from "@car/ir";
import { type ActionDigest, EVENT_KINDS, type EventData } from "../events/event-kinds.ts";
import type { StateStore } from "../store/state-store.ts";
import type { WorkingState } from "../store/working-state.ts";
import { ActionFailure } from "../tools/action-failure.ts";
import type { ToolRegistry } from "../tools/tool-registry.ts";
import type { CostMeter } from "./cost-meter.ts";
import type { RunEvents } from "./run-events.ts";
import type { Scheduler } from "./schedule.ts";

/** The rollback warning carried in `error` by succeeded actions of an aborted proposal. */
export const ROLLBACK_WARNING = "proposal aborted; state effects were rolled back; external effects may remain and were not undone";

export const PENDING = 0;
export const RUNNING = 1;
export const SUCCEEDED = 2;
export const FAILED = 3;
export const REJECTED = 4;
export const SKIPPED = 5;
export const STATUS_NAMES: readonly ActionStatus[] = ["validated", "executing", "succeeded", "failed", "rejected", "skipped"];

/** What running an action produced: its output, or why it failed. */
export type Outcome = { output: JsonValue } | ActionFailure;

/** An outcome, and whether it came from the result cache. */
export interface Called {
  outcome: Outcome;
  cached: boolean;
}

export type RunOutcome = "committed" | "rolled_back" | "rejected";

const NO_CHANGES: Record<string, StateMutation> = Object.freeze(emptyMap<StateMutation>());
const NO_EFFECTS: JsonObject = Object.freeze(emptyMap());

export class Outcomes {
  /** Per action: one of the status codes above. */
  readonly status: Uint8Array;
  /** Per action: its output once it succeeded (what `$id.output` resolves to), else null. */
  readonly outputs: JsonValue[];
  /** Indices of the actions that succeeded, in completion order (what a compensation undoes, in reverse). */
  readonly completed: number[] = [];
  /** By action index: the stage that rejected it during the run (`action_rejected`'s `stage`). */
  readonly rejectedAt = new Map<number, string>();
  /** Indices of the `skip` actions whose tool failed and which ended skipped (DECISIONS §14). */
  readonly skippedFailures: number[] = [];
  readonly #terminal: Uint8Array;
  readonly #errors: (string | null)[];
  readonly #changes: (Record<string, StateMutation> | undefined)[];
  readonly #durations: Float64Array;
  readonly #stamps: string[];
  readonly #proposalId: string;
  readonly #actions: readonly Action[];
  readonly #events: RunEvents;
  readonly #working: WorkingState;
  readonly #tools: ToolRegistry;
  readonly #clock: Clock;
  readonly #scheduler: Scheduler;
  /** Per tool: the last `action_succeeded` data for an action declaring no effects, shared while the digest repeats (it never changes). */
  #succeededData: Map<string | undefined, ActionDigest> | undefined;

  constructor(
    proposalId: string,
    actions: readonly Action[],
    events: RunEvents,
    working: WorkingState,
    tools: ToolRegistry,
    clock: Clock,
    scheduler: Scheduler,
  ) {
    this.#proposalId = proposalId;
    this.#actions = actions;
    this.#events = events;
    this.#working = working;
    this.#tools = tools;
    this.#clock = clock;
    this.#scheduler = scheduler;
    const n = actions.length;
    this.status = new Uint8Array(n);
    this.#terminal = new Uint8Array(n);
    this.outputs = new Array<JsonValue>(n).fill(null);
    this.#errors = new Array<string | null>(n).fill(null);
    this.#changes = new Array<Record<string, StateMutation> | undefined>(n);
    this.#durations = new Float64Array(n);
    this.#stamps = new Array<string>(n);
  }

  /** Action i passed its checks and starts now. */
  started(i: number): void {
    this.#stamps[i] = this.#events.stamp();
    this.status[i] = RUNNING;
  }

  /** Records a finished action. */
  conclude(i: number, startMs: number, called: Called): void {
    this.#durations[i] = this.#clock.now() - startMs;
    if (called.outcome instanceof ActionFailure) this.fail(i, called.outcome);
    else this.succeed(i, called.outcome.output, called.cached);
  }

  settle(i: number, status: number, error: string | null): void {
    this.status[i] = status;
    this.#errors[i] = error;
    this.#stamps[i] ??= this.#events.stamp();
  }

  reject(i: number, reason: string, stage: string): void {
    const action = this.#actions[i]!;
    this.settle(i, REJECTED, reason);
    this.rejectedAt.set(i, stage);
    this.#events.emit(EVENT_KINDS.actionRejected, action.id, { reason, stage });
    // A rejection is not retried (it would loop): `retry` is treated as `abort`.
    if (action.failure_behavior !== "skip") this.#scheduler.abort(`action '${action.id}' was rejected: ${reason}`);
  }

  fail(i: number, failure: ActionFailure): void {
    const action = this.#actions[i]!;
    // DECISIONS §14: a `skip` action whose tool failed (not terminally) ends `skipped`, its error kept;
    // the failure is still recorded as one (`action_failed`, marked `skipped`).
    const skipped = action.type === "tool_call" && action.failure_behavior === "skip" && !failure.terminal;
    this.settle(i, skipped ? SKIPPED : FAILED, failure.message);
    const data: EventData["action_failed"] = {
      ...this.#digestData(action),
      error_class: action.tool === undefined && failure.errorClass !== "timeout" ? "unknown" : failure.errorClass,
      error: failure.message,
    };
    if (failure.terminal) {
      this.#terminal[i] = 1;
      data.terminal = true;
    }
    if (skipped) {
      data.skipped = true;
      this.skippedFailures.push(i);
    }
    this.#events.emit(EVENT_KINDS.actionFailed, action.id, data);
    if (failure.terminal || action.failure_behavior !== "skip")
      this.#scheduler.abort(`action '${action.id}' failed${failure.terminal ? " terminally" : ""}: ${failure.message}`);
  }

  succeed(i: number, output: JsonValue, cached: boolean): void {
    const action = this.#actions[i]!;
    this.outputs[i] = output;
    let changes: Record<string, StateMutation> | undefined;
    const ownKey = action.type === "state_write" ? (getOwn(action.parameters, "key") as string) : undefined;
    if (ownKey !== undefined) changes = this.#write(changes, action, ownKey, output);
    const effects = action.expected_effects;
    // for…in rather than Object.keys: most actions declare no effects, and this runs once per action.
    for (const key in effects) {
      if (!Object.hasOwn(effects, key) || key === ownKey) continue;
      changes = this.#write(changes, action, key, effects[key]!);
    }
    this.#changes[i] = changes;
    this.settle(i, SUCCEEDED, null);
    this.completed.push(i);
    let data: EventData["action_succeeded"];
    if (cached) {
      data = this.#digestData(action);
      data.cached = true;
    } else data = this.#sharedDigestData(action);
    this.#events.emit(EVENT_KINDS.actionSucceeded, action.id, data);
  }

  /**
   * `#digestData` for an action that declares no effects, shared (frozen)
   * with the previous action of the same tool whose parameters had the same
   * digest: at 100k calls of one tool with the same parameters, one object
   * instead of 100k equal ones. Equal as JSON to a fresh one.
   */
  #sharedDigestData(action: Action): ActionDigest {
    for (const _ in action.expected_effects) return this.#digestData(action);
    const digest = paramsDigest(action.parameters);
    const last = this.#succeededData?.get(action.tool);
    if (last !== undefined && last.params_digest === digest && last.tool_source === this.#toolSource(action)) return last;
    const data = this.#digestData(action, digest);
    data.expected_effects = NO_EFFECTS;
    (this.#succeededData ??= new Map()).set(action.tool, Object.freeze(data));
    return data;
  }

  /** Writes `key` into the working state; the action's change record is made on its first write. */
  #write(changes: Record<string, StateMutation> | undefined, action: Action, key: string, value: JsonValue): Record<string, StateMutation> {
    const into = changes ?? emptyMap<StateMutation>();
    setOwn(into, key, this.#working.set(key, value, action.id));
    return into;
  }

  #digestData(action: Action, digest = paramsDigest(action.parameters)): ActionDigest {
    const data: ActionDigest = { params_digest: digest, expected_effects: action.expected_effects };
    if (action.tool !== undefined) {
      data.tool = action.tool;
      const source = this.#toolSource(action);
      if (source !== undefined) data.tool_source = source;
    }
    return data;
  }

  /** The source of the action's tool as registered now (a tool may be registered again mid-run). */
  #toolSource(action: Action): string | undefined {
    return action.tool === undefined ? undefined : this.#tools.get(action.tool)?.schema.source;
  }

  /** Rejects every action at admission: nothing runs. */
  rejectAll(findings: readonly { index: number; message: string }[], meter: CostMeter): ProposalResult {
    const own = new Map<number, string[]>();
    const general: string[] = [];
    for (const f of findings) {
      if (f.index < 0) general.push(f.message);
      else {
        const list = own.get(f.index) ?? [];
        list.push(f.message);
        own.set(f.index, list);
      }
    }
    const summary = findings.map((f) => (f.index < 0 ? f.message : `${this.#actions[f.index]!.id}: ${f.message}`)).join("; ");
    for (let i = 0; i < this.#actions.length; i++) {
      const mine = own.get(i);
      const reason = mine !== undefined ? [...mine, ...general].join("; ") : `not run: the proposal was rejected at admission (${summary})`;
      this.status[i] = REJECTED;
      this.#errors[i] = reason;
      this.#stamps[i] = this.#events.stamp();
      this.#events.emit(EVENT_KINDS.actionRejected, this.#actions[i]!.id, { reason, stage: "admission" });
    }
    return this.complete("rejected", summary, meter);
  }

  /** A compensation action reached in the forward run: skipped, without aborting anything (it runs only to undo). */
  skipCompensationAction(i: number): void {
    const reason = "compensation action: it runs only to undo the action that names it";
    this.settle(i, SKIPPED, reason);
    this.#events.emit(EVENT_KINDS.actionSkipped, this.#actions[i]!.id, { reason, compensation_action: true });
  }

  /** Marks every action that never ran (or never finished) as skipped, with why. */
  skipUnfinished(reason: string): void {
    for (let i = 0; i < this.#actions.length; i++) {
      if (this.status[i] === PENDING || this.status[i] === RUNNING) {
        this.settle(i, SKIPPED, reason);
        this.#events.emit(EVENT_KINDS.actionSkipped, this.#actions[i]!.id, { reason });
      }
    }
  }

  /** Audit one `state_changed` per pending write, with the version it will get at commit. */
  emitStateChanges(state: StateStore): void {
    const next = new Map<string, number>();
    for (const m of this.#working.mutations) {
      const version = (next.get(m.key) ?? state.version(m.key)) + 1;
      next.set(m.key, version);
      const data: EventData["state_changed"] =
        m.mutation.op === "set" ? { key: m.key, op: "set", value: m.mutation.value, version } : { key: m.key, op: "delete", version };
      this.#events.emit(EVENT_KINDS.stateChanged, m.action_id, data);
    }
  }

  /** Emits `proposal_completed` and builds the result. */
  complete(outcome: RunOutcome, reason: string | undefined, meter: CostMeter): ProposalResult {
    const rolledBack = outcome === "rolled_back";
    const results: ActionResult[] = new Array(this.#actions.length);
    const cost: CostSummary = {
      tool_calls: meter.toolCalls,
      actions_executed: 0,
      actions_rejected: 0,
      actions_skipped: 0,
      total_duration_ms: 0,
      retries: meter.retries,
    };
    for (let i = 0; i < this.#actions.length; i++) {
      const status = this.status[i]!;
      if (status === SUCCEEDED || status === FAILED) cost.actions_executed++;
      else if (status === REJECTED) cost.actions_rejected++;
      else cost.actions_skipped++;
      const r: ActionResult = {
        action_id: this.#actions[i]!.id,
        status: STATUS_NAMES[status]!,
        output: this.outputs[i]!,
        error: this.#errors[i]!,
        state_changes: this.#changes[i] ?? NO_CHANGES,
        duration_ms: this.#durations[i]!,
        timestamp: this.#stamps[i]!,
      };
      if (this.#terminal[i] === 1) r.terminal = true;
      if (rolledBack && status === SUCCEEDED) {
        r.rolled_back = true;
        r.state_changes = NO_CHANGES;
        r.error = ROLLBACK_WARNING;
      }
      results[i] = r;
    }
    cost.total_duration_ms = this.#clock.now() - meter.startMs;
    const data: EventData["proposal_completed"] = { outcome, cost: cost as unknown as JsonObject };
    if (reason !== undefined) data.reason = reason;
    if (rolledBack) data.external_effects_undone = false;
    this.#events.emit(EVENT_KINDS.proposalCompleted, undefined, data);
    return { proposal_id: this.#proposalId, results, cost };
  }
}
