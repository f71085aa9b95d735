/**
 * One action from ready to done: run-time budget → dependencies →
 * state dependencies present → preconditions → `$id.output` references → policies → approval gate →
 * `action_started` → the state action inline, or the tool call through
 * dispatch. Each check that fails rejects the action at its stage.
 */
import { InterpolationBudget, effectiveReadSet, evaluatePreconditions, resolveOutputRefs } from "@car/ir";
import type { Action, DependencyGraph, JsonObject, ToolSchema } from "@car/ir";
import type { ApprovalRecord } from "@car/policy";
import { schemaMismatchMessage, unknownToolMessage } from "@car/verify";
import { EVENT_KINDS, type EventData } from "../events/event-kinds.ts";
import type { AssumptionRecord } from "../store/runtime-store.ts";
import type { WorkingState } from "../store/working-state.ts";
import type { DetachedInvocations } from "../tools/detached.ts";
import type { ToolRegistry } from "../tools/tool-registry.ts";
import { gateCall, type GateRules, type GateVerdict } from "../gates/call-gate.ts";
import type { ApprovalEmit } from "../gates/approval-on-record.ts";
import { gatedAction, type GatedAction } from "../gates/gated-action.ts";
import type { ApprovalWait, WaitPlace } from "../gates/approval-wait.ts";
import type { CostMeter } from "./cost-meter.ts";
import type { Dispatcher } from "./dispatch.ts";
import type { CallListener } from "./pending-call.ts";
import { FAILED, STATUS_NAMES, SUCCEEDED } from "./outcomes.ts";
import type { Called, Outcomes } from "./outcomes.ts";
import type { RunEvents } from "./run-events.ts";
import { reasonText } from "./schedule.ts";
import type { ScheduledWork, Scheduler } from "./schedule.ts";
import { runStateAction, stateFor } from "./state-actions.ts";
import { traceSuccess } from "../trace/trace-steps.ts";
import { Turns } from "./turns.ts";

/**
 * Referenced bytes an action may bring into its parameters, with those brought since the last yield, before the
 * rest of it waits a turn of the event loop (`Turns`).
 */
const YIELD_AFTER_BYTES = 256 * 1024;

/** What the pipeline borrows from the runtime. */
export interface PipelineEnvironment extends GateRules {
  readonly tools: ToolRegistry;
  /** Detached invocations: a detached call's success enters the trace when its final result is one. */
  readonly detached: DetachedInvocations;
  readonly clock: { now(): number };
  /** Bytes `$id.output` references may put into one proposal's parameters, in all. */
  readonly maxInterpolatedBytes: number;
}

/** The parts of one run the pipeline works with. */
export interface RunParts {
  readonly runId: string;
  readonly actions: readonly Action[];
  /** Actions named by an `action_ref` compensation: declared, never run forward. */
  readonly compensations: ReadonlySet<number>;
  readonly graph: DependencyGraph;
  /** `hasRefs[i]`: action i's parameters hold output references (resolved and validated here). */
  readonly hasRefs: Uint8Array;
  /** By action id: the approval that admitted an action with references (`Admission.approvals`). */
  readonly approvals: ReadonlyMap<string, ApprovalRecord>;
  /** Where a resolved form the approval gate held is noted (the run's report). */
  readonly gated: GatedAction[];
  readonly working: WorkingState;
  readonly events: RunEvents;
  readonly outcomes: Outcomes;
  readonly scheduler: Scheduler;
  readonly meter: CostMeter;
  readonly dispatcher: Dispatcher;
  /** The run waits for approvals (`ExecuteOptions.approvalWait`): a resolved form that needs its own waits too, where it stands. */
  readonly approvalWait?: { wait: ApprovalWait; place: WaitPlace } | undefined;
}

export class ActionPipeline implements ScheduledWork, CallListener {
  /** The assumptions the started actions declared, for the commit to check. */
  readonly assumptions: AssumptionRecord[] = [];
  readonly #env: PipelineEnvironment;
  readonly #runId: string;
  readonly #actions: readonly Action[];
  readonly #compensations: ReadonlySet<number>;
  readonly #graph: DependencyGraph;
  readonly #hasRefs: Uint8Array;
  readonly #approvals: ReadonlyMap<string, ApprovalRecord>;
  readonly #gated: GatedAction[];
  readonly #working: WorkingState;
  readonly #events: RunEvents;
  readonly #outcomes: Outcomes;
  readonly #scheduler: Scheduler;
  readonly #meter: CostMeter;
  readonly #dispatcher: Dispatcher;
  readonly #approvalWait: { wait: ApprovalWait; place: WaitPlace } | undefined;
  /** What this proposal's references have interpolated so far (made on the first reference). */
  #interpolated: InterpolationBudget | undefined;
  /** Referenced bytes brought into parameters since the run last yielded the event loop. */
  #sinceYield = 0;
  readonly #turns = new Turns();
  /** By action type, then tool: the shared `action_started` data. */
  #startedCache: Map<string, Map<string | undefined, EventData["action_started"]>> | undefined;
  /** Per action: when it started (its duration is measured from here when its call ends later). */
  readonly #startMs: Float64Array;
  /** The gate's events go to this run's log. */
  readonly #emit: ApprovalEmit = (kind, id, data) => this.#events.emit(kind, id, data);
  /** A call that waited for an approver is still wanted unless the run aborted meanwhile. */
  readonly #wanted = (): boolean => this.#scheduler.abortReason === undefined;

  constructor(env: PipelineEnvironment, parts: RunParts) {
    this.#env = env;
    this.#runId = parts.runId;
    this.#actions = parts.actions;
    this.#compensations = parts.compensations;
    this.#graph = parts.graph;
    this.#hasRefs = parts.hasRefs;
    this.#approvals = parts.approvals;
    this.#gated = parts.gated;
    this.#working = parts.working;
    this.#events = parts.events;
    this.#outcomes = parts.outcomes;
    this.#scheduler = parts.scheduler;
    this.#meter = parts.meter;
    this.#dispatcher = parts.dispatcher;
    this.#approvalWait = parts.approvalWait;
    this.#startMs = new Float64Array(parts.actions.length);
  }

  crashed(i: number, error: unknown): void {
    // An engine bug must not hang the proposal: record it on the action and abort.
    this.#outcomes.settle(i, FAILED, `internal error: ${reasonText(error)}`);
    this.#scheduler.abort(`internal error in action '${this.#actions[i]!.id}'`);
  }

  /** The call of action i ended after `run` returned (see `Dispatcher.dispatch`). */
  callEnded(i: number, called: Called): void {
    try {
      this.#concludeCall(i, called);
    } catch (error) {
      this.crashed(i, error);
    }
    this.#scheduler.done(i);
  }

  callCrashed(i: number, error: unknown): void {
    this.crashed(i, error);
    this.#scheduler.done(i);
  }

  /** Runs one action: true when it finished now, false when it goes on asynchronously and tells the scheduler when done. */
  run(i: number): boolean {
    const action = this.#actions[i]!;
    const outcomes = this.#outcomes;
    if (this.#compensations.has(i)) {
      outcomes.skipCompensationAction(i);
      return true;
    }
    const overBudget = this.#meter.exceeded(action);
    if (overBudget !== undefined) {
      this.#scheduler.stopForBudget(overBudget);
      return true;
    }
    const status = outcomes.status;
    const { predStart, preds } = this.#graph.flat;
    for (let e = predStart[i]!, end = predStart[i + 1]!; e < end; e++) {
      const p = preds[e]!;
      if (status[p] !== SUCCEEDED) {
        outcomes.reject(i, `unsatisfied dependency: '${this.#actions[p]!.id}' ${STATUS_NAMES[status[p]!]}`, "dependency");
        return true;
      }
    }
    // DECISIONS §13: a state dependency must be present in the state the action sees, or it is rejected before dispatch.
    const stateDependencies = action.state_dependencies;
    for (let k = 0; k < stateDependencies.length; k++) {
      const key = stateDependencies[k]!;
      if (!this.#working.exists(key)) {
        outcomes.reject(i, `state dependency '${key}' is not available at this point: no value for it in the state the action sees`, "state_dependency");
        return true;
      }
    }
    outcomes.started(i);
    this.#startMs[i] = this.#env.clock.now();

    if (action.type !== "assertion" && action.preconditions.length > 0) {
      const checked = evaluatePreconditions(action.preconditions, stateFor(action.preconditions, this.#working));
      if (!checked.ok) {
        outcomes.reject(i, checked.message, "precondition");
        return true;
      }
    }
    if (this.#hasRefs[i] === 0) return this.#gateAndStart(i, action, action.parameters);
    // Large referenced outputs make the gate and the dispatch costly: once the run has brought in YIELD_AFTER_BYTES
    // since it last yielded, the next action with references waits for a turn of the event loop of its own (and so
    // does every one after it while any waits, in order), so other connections are served in between.
    if (this.#sinceYield > YIELD_AFTER_BYTES || this.#turns.waiting) {
      this.#turns.defer(() => this.#resolveLater(i, action));
      return false;
    }
    return this.#resolveAndStart(i, action);
  }

  /** `#resolveAndStart` in a later turn: withdrawn (never dispatched, so it ends skipped) when the run aborted meanwhile. */
  #resolveLater(i: number, action: Action): void {
    let now = true;
    this.#sinceYield = 0;
    try {
      if (this.#scheduler.abortReason === undefined) now = this.#resolveAndStart(i, action);
    } catch (error) {
      this.callCrashed(i, error);
      return;
    }
    if (now) this.#scheduler.done(i);
  }

  /** Resolves action i's `$id.output` references within the proposal's budget, then `#gateAndStart`. */
  #resolveAndStart(i: number, action: Action): boolean {
    const outcomes = this.#outcomes;
    const status = outcomes.status;
    this.#interpolated ??= new InterpolationBudget(this.#env.maxInterpolatedBytes);
    const before = this.#interpolated.used;
    let params: JsonObject;
    try {
      params = resolveOutputRefs(
        action.parameters,
        (id) => {
          const j = this.#graph.indexOf.get(id);
          return j !== undefined && status[j] === SUCCEEDED ? { found: true, value: outcomes.outputs[j]! } : { found: false };
        },
        this.#interpolated,
      );
    } catch (error) {
      outcomes.reject(i, reasonText(error), "reference");
      return true;
    }
    this.#sinceYield += this.#interpolated.used - before;
    return this.#gateAndStart(i, action, params);
  }

  /** The call gate on the form the action is made in, then `#start`: true when it finished now. */
  #gateAndStart(i: number, action: Action, params: JsonObject): boolean {
    const subject = params === action.parameters ? action : { ...action, parameters: params };
    // Admission judged the declared form; the approval gate is asked again only where references resolved to a new one.
    const approval =
      this.#hasRefs[i] === 1 ? { schema: this.#schemaOf(action), admitted: this.#approvals.get(action.id), waiting: this.#approvalWait } : undefined;
    const call = { action: subject, recordAs: action.id, run_id: this.#runId, state: this.#working, approval, wanted: this.#wanted };
    const verdict = gateCall(this.#env, call, this.#emit);
    if (!(verdict instanceof Promise)) return this.#afterGate(i, action, params, verdict);
    verdict
      .then((v) => this.#afterGate(i, action, params, v))
      .then(
        (now) => {
          if (now) this.#scheduler.done(i);
        },
        (error: unknown) => this.callCrashed(i, error),
      );
    return false;
  }

  /** Passed: on to `#start`. Refused: rejected at the gate's stage. Withdrawn (aborted while waiting): never started, so skipped. */
  #afterGate(i: number, action: Action, params: JsonObject, verdict: GateVerdict): boolean {
    if (verdict === undefined) return this.#start(i, action, params);
    if (verdict === "withdrawn") return true;
    if (verdict.stage === "approval") this.#gated.push(gatedAction(action.id, "dispatch", verdict.decision));
    this.#outcomes.reject(i, verdict.message, verdict.stage);
    return true;
  }

  #schemaOf(action: Action): ToolSchema | undefined {
    return action.tool === undefined ? undefined : this.#env.tools.get(action.tool)?.schema;
  }

  /**
   * From `action_started` on: state actions run inline; a tool call passes
   * the checks only dispatch time can make, then dispatches. True when the
   * action finished now; false when its call ends later (`callEnded`).
   */
  #start(i: number, action: Action, params: JsonObject): boolean {
    this.#noteReads(action);
    this.#events.emit(EVENT_KINDS.actionStarted, action.id, this.#startedData(action));
    if (action.type !== "tool_call") {
      this.#outcomes.conclude(i, this.#startMs[i]!, { outcome: runStateAction(action, params, this.#working), cached: false });
      return true;
    }
    const tool = this.#env.tools.get(action.tool!);
    if (tool === undefined) {
      this.#outcomes.reject(i, unknownToolMessage(action.tool!), "admission");
      return true;
    }
    if (this.#hasRefs[i] === 1 && tool.validateParams !== undefined) {
      const checked = tool.validateParams(params);
      if (!checked.ok) {
        this.#outcomes.reject(i, schemaMismatchMessage(tool.schema.name, checked.errors), "schema");
        return true;
      }
    }
    const called = this.#dispatcher.dispatch(action, tool, params, this, i);
    if (called === undefined) return false;
    this.#concludeCall(i, called);
    return true;
  }

  #concludeCall(i: number, called: Called): void {
    this.#outcomes.conclude(i, this.#startMs[i]!, called);
    if (this.#outcomes.status[i] !== SUCCEEDED) return;
    const action = this.#actions[i]!;
    const { traceGate } = this.#env;
    const runId = this.#runId;
    if (action.invocation_mode === "one_shot") traceSuccess(traceGate, runId, action.tool!);
    else {
      // Started is not succeeded: the call joins the trace as a success only if it ends in one.
      const handle = (this.#outcomes.outputs[i] as { tool_handle?: unknown } | undefined)?.tool_handle;
      if (typeof handle === "string") this.#env.detached.onSuccess(handle, () => traceSuccess(traceGate, runId, action.tool!));
    }
  }

  /**
   * `action_started` data, shared between actions of one type and tool: the type, and for a tool call the
   * tool and its `tool_source` (the reference's ActionExecuting carries both, as the outcome events do).
   */
  #startedData(action: Action): EventData["action_started"] {
    // Two lookups instead of a key string built per action.
    const cache = (this.#startedCache ??= new Map());
    let byTool = cache.get(action.type);
    if (byTool === undefined) cache.set(action.type, (byTool = new Map()));
    let data = byTool.get(action.tool);
    // A tool may be registered again mid-run with another source: the shared data follows it.
    const source = action.tool === undefined ? undefined : this.#env.tools.get(action.tool)?.schema.source;
    if (data === undefined || data["tool_source"] !== source) {
      const fresh: EventData["action_started"] = { type: action.type };
      if (action.tool !== undefined) fresh["tool"] = action.tool;
      if (source !== undefined) fresh["tool_source"] = source;
      data = Object.freeze(fresh);
      byTool.set(action.tool, data);
    }
    return data;
  }

  #noteReads(action: Action): void {
    if (action.read_set.length === 0 && action.state_dependencies.length === 0 && action.assumptions.length === 0 && action.type !== "state_read") return;
    for (const key of effectiveReadSet(action)) this.#working.noteRead(key, action.id);
    for (const a of action.assumptions) {
      const record: AssumptionRecord = { action_id: action.id, key: a.key };
      if (a.expected_value !== undefined) record.expected_value = a.expected_value;
      if (a.read_version !== undefined) record.read_version = a.read_version;
      this.assumptions.push(record);
    }
  }
}
