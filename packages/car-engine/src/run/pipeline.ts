/**
 * One action from ready to done: run-time budget → dependencies →
 * state dependencies present → preconditions → `$id.output` references → policies → approval gate →
 * `action_started` → the state action inline, or the tool call through
 * dispatch. Each check that fails rejects the action at its stage.
 */
import { InterpolationBudget, effectiveReadSet, evaluatePreconditions, resolveOutputRefs } from "@car/ir";
import type { Action, DependencyGraph, JsonObject } from "@car/ir";
import type { ApprovalGate, PolicyEngine, TraceGate } from "@car/policy";
import { schemaMismatchMessage, unknownToolMessage } from "@car/verify";
import { EVENT_KINDS } from "../events/event.ts";
import type { AssumptionRecord } from "../store/runtime-store.ts";
import type { WorkingState } from "../store/working-state.ts";
import type { ToolRegistry } from "../tools/tool-registry.ts";
import { type ApprovalEmit, decideOnRecord } from "./approval-events.ts";
import type { CostMeter } from "./cost-meter.ts";
import { isThenable } from "./dispatch.ts";
import type { Dispatcher } from "./dispatch.ts";
import { FAILED, STATUS_NAMES, SUCCEEDED } from "./outcomes.ts";
import type { Called, Outcomes } from "./outcomes.ts";
import type { RunEvents } from "./run-events.ts";
import { reasonText } from "./schedule.ts";
import type { ScheduledWork, Scheduler } from "./schedule.ts";
import { runStateAction, stateFor } from "./state-actions.ts";
import { admitToTrace, deniedByPolicy, traceApproval, traceSuccess } from "../trace/trace-steps.ts";

/** What the pipeline borrows from the runtime. */
export interface PipelineEnvironment {
  readonly tools: ToolRegistry;
  readonly policies: PolicyEngine;
  /** The tier / approval gate, when configured: admission evaluates every action; here only those whose `$id.output` references resolved. */
  readonly approvalGate: ApprovalGate | undefined;
  /** Temporal rules, judged against the trace as the last step before a tool is dispatched. */
  readonly traceGate: TraceGate;
  readonly clock: { now(): number };
  /** Bytes `$id.output` references may put into one proposal's parameters, in all. */
  readonly maxInterpolatedBytes: number;
}

/** The parts of one run the pipeline works with. */
export interface RunParts {
  readonly proposalId: string;
  readonly actions: readonly Action[];
  /** Actions named by an `action_ref` compensation: declared, never run forward. */
  readonly compensations: ReadonlySet<number>;
  readonly graph: DependencyGraph;
  /** `hasRefs[i]`: action i's parameters hold output references (resolved and validated here). */
  readonly hasRefs: Uint8Array;
  readonly working: WorkingState;
  readonly events: RunEvents;
  readonly outcomes: Outcomes;
  readonly scheduler: Scheduler;
  readonly meter: CostMeter;
  readonly dispatcher: Dispatcher;
}

export class ActionPipeline implements ScheduledWork {
  /** The assumptions the started actions declared, for the commit to check. */
  readonly assumptions: AssumptionRecord[] = [];
  readonly #env: PipelineEnvironment;
  readonly #proposalId: string;
  readonly #actions: readonly Action[];
  readonly #compensations: ReadonlySet<number>;
  readonly #graph: DependencyGraph;
  readonly #hasRefs: Uint8Array;
  readonly #working: WorkingState;
  readonly #events: RunEvents;
  readonly #outcomes: Outcomes;
  readonly #scheduler: Scheduler;
  readonly #meter: CostMeter;
  readonly #dispatcher: Dispatcher;
  /** What this proposal's references have interpolated so far (made on the first reference). */
  #interpolated: InterpolationBudget | undefined;
  readonly #startedCache = new Map<string, JsonObject>();

  constructor(env: PipelineEnvironment, parts: RunParts) {
    this.#env = env;
    this.#proposalId = parts.proposalId;
    this.#actions = parts.actions;
    this.#compensations = parts.compensations;
    this.#graph = parts.graph;
    this.#hasRefs = parts.hasRefs;
    this.#working = parts.working;
    this.#events = parts.events;
    this.#outcomes = parts.outcomes;
    this.#scheduler = parts.scheduler;
    this.#meter = parts.meter;
    this.#dispatcher = parts.dispatcher;
  }

  crashed(i: number, error: unknown): void {
    // An engine bug must not hang the proposal: record it on the action and abort.
    this.#outcomes.settle(i, FAILED, `internal error: ${reasonText(error)}`);
    this.#scheduler.abort(`internal error in action '${this.#actions[i]!.id}'`);
  }

  /** Runs one action; returns a promise only when something on its path is asynchronous. */
  run(i: number): Promise<void> | void {
    const action = this.#actions[i]!;
    const outcomes = this.#outcomes;
    if (this.#compensations.has(i)) {
      outcomes.skipCompensationAction(i);
      return;
    }
    const overBudget = this.#meter.exceeded(action);
    if (overBudget !== undefined) {
      this.#scheduler.stopForBudget(overBudget);
      return;
    }
    const status = outcomes.status;
    for (const p of this.#graph.preds[i]!) {
      if (status[p] !== SUCCEEDED) {
        outcomes.reject(i, `unsatisfied dependency: '${this.#actions[p]!.id}' ${STATUS_NAMES[status[p]!]}`, "dependency");
        return;
      }
    }
    // DECISIONS §13: a state dependency must be present in the state the action sees, or it is rejected before dispatch.
    for (const key of action.state_dependencies) {
      if (!this.#working.exists(key)) {
        outcomes.reject(i, `state dependency '${key}' is not available at this point: no value for it in the state the action sees`, "state_dependency");
        return;
      }
    }
    outcomes.started(i);
    const startMs = this.#env.clock.now();

    if (action.type !== "assertion" && action.preconditions.length > 0) {
      const checked = evaluatePreconditions(action.preconditions, stateFor(action.preconditions, this.#working));
      if (!checked.ok) {
        outcomes.reject(i, checked.message, "precondition");
        return;
      }
    }
    let params = action.parameters;
    if (this.#hasRefs[i] === 1) {
      try {
        this.#interpolated ??= new InterpolationBudget(this.#env.maxInterpolatedBytes);
        params = resolveOutputRefs(
          params,
          (id) => {
            const j = this.#graph.indexOf.get(id);
            return j !== undefined && status[j] === SUCCEEDED ? { found: true, value: outcomes.outputs[j]! } : { found: false };
          },
          this.#interpolated,
        );
      } catch (error) {
        outcomes.reject(i, reasonText(error), "reference");
        return;
      }
    }
    if (this.#env.policies.size > 0) {
      const subject = params === action.parameters ? action : { ...action, parameters: params };
      const violations = this.#env.policies.check(subject, this.#working);
      if (violations.length > 0) {
        for (const v of violations) this.#events.emit(EVENT_KINDS.policyViolation, action.id, { policy_name: v.policy_name, reason: v.reason });
        outcomes.reject(i, `denied by policy: ${violations.map((v) => `${v.policy_name}: ${v.reason}`).join("; ")}`, "policy");
        return;
      }
    }

    // Admission evaluated the gate on the declared parameters; only resolved references are new here.
    const gate = this.#hasRefs[i] === 1 ? this.#env.approvalGate : undefined;
    if (gate === undefined) return this.#traced(i, action, params) ? this.#start(i, action, params, startMs) : undefined;
    const schema = action.tool === undefined ? undefined : this.#env.tools.get(action.tool)?.schema;
    const subject = params === action.parameters ? action : { ...action, parameters: params };
    const emit: ApprovalEmit = (kind, id, data) => this.#events.emit(kind, id, data);
    return decideOnRecord(gate, subject, schema, emit, { ask: true, everyDecision: true, context: {} }).then((decision) => {
      if (decision.decision !== "allow") {
        outcomes.reject(i, `denied by approval gate: ${decision.reason ?? `requires ${decision.required}`}`, "approval");
        return;
      }
      if (action.tool !== undefined) traceApproval(this.#env.traceGate, this.#proposalId, action.tool, decision);
      if (this.#scheduler.abortReason !== undefined) return; // aborted while waiting: never started, so skipped
      return this.#traced(i, action, params) ? this.#start(i, action, params, startMs) : undefined;
    });
  }

  /**
   * The TraceGate, last before dispatch: judges a tool call against what ran
   * so far and, when it passes, records it as dispatched in the same step.
   * A violation is a policy rejection (`policy_violation` events).
   */
  #traced(i: number, action: Action, params: JsonObject): boolean {
    if (action.type !== "tool_call") return true;
    const violations = admitToTrace(this.#env.traceGate, this.#proposalId, params === action.parameters ? action : { ...action, parameters: params });
    if (violations.length === 0) return true;
    for (const v of violations) this.#events.emit(EVENT_KINDS.policyViolation, action.id, { policy_name: v.policy_name, reason: v.reason });
    this.#outcomes.reject(i, deniedByPolicy(violations), "policy");
    return false;
  }

  /** From `action_started` on: state actions run inline, tool calls dispatch. */
  #start(i: number, action: Action, params: JsonObject, startMs: number): Promise<void> | void {
    this.#noteReads(action);
    this.#events.emit(EVENT_KINDS.actionStarted, action.id, this.#startedData(action));
    if (action.type !== "tool_call") {
      this.#outcomes.conclude(i, startMs, { outcome: runStateAction(action, params, this.#working), cached: false });
      return;
    }
    const called = this.#callTool(i, action, params);
    if (isThenable(called)) return called.then((c) => this.#concludeCall(i, startMs, c));
    this.#concludeCall(i, startMs, called);
  }

  #concludeCall(i: number, startMs: number, called: Called | undefined): void {
    this.#outcomes.conclude(i, startMs, called);
    if (this.#outcomes.status[i] === SUCCEEDED) traceSuccess(this.#env.traceGate, this.#proposalId, this.#actions[i]!.tool!);
  }

  /** The checks only dispatch time can make, then the call; `undefined` when the call was rejected before dispatch. */
  #callTool(i: number, action: Action, params: JsonObject): Called | undefined | Promise<Called> {
    const tool = this.#env.tools.get(action.tool!);
    if (tool === undefined) {
      this.#outcomes.reject(i, unknownToolMessage(action.tool!), "admission");
      return undefined;
    }
    if (this.#hasRefs[i] === 1 && tool.validateParams !== undefined) {
      const checked = tool.validateParams(params);
      if (!checked.ok) {
        this.#outcomes.reject(i, schemaMismatchMessage(tool.schema.name, checked.errors), "schema");
        return undefined;
      }
    }
    return this.#dispatcher.call(action, tool, params);
  }

  /** `action_started` data, shared between actions of one type and tool (it never changes). */
  #startedData(action: Action): JsonObject {
    const key = action.tool === undefined ? action.type : `${action.type}\u0000${action.tool}`;
    let data = this.#startedCache.get(key);
    if (data === undefined) {
      data = Object.freeze(action.tool === undefined ? { type: action.type } : { type: action.type, tool: action.tool }) as JsonObject;
      this.#startedCache.set(key, data);
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
