/**
 * One execution of one admitted proposal: the ready-set scheduler, the
 * per-action pipeline, abort and rollback, the results and the audit events.
 *
 * Scheduling is a ready set over `dependencyEdges`: an action starts the
 * moment its own predecessors have finished, never waiting for a whole
 * "level", so a slow branch never holds up an unrelated one. Everything on
 * the path of a synchronous tool stays synchronous except one promise hop
 * per action; timers and abort controllers exist only for calls that are
 * actually asynchronous.
 *
 * State is a `WorkingState` overlay: nothing reaches the store until the
 * proposal commits, so an abort discards the overlay and the store is
 * exactly as it was before the proposal (the pre-proposal snapshot).
 */
import {
  CarError,
  effectiveReadSet,
  emptyMap,
  evaluatePreconditions,
  getOwn,
  InterpolationBudget,
  isCarError,
  paramsDigest,
  resolveOutputRefs,
  rfc3339,
  setOwn,
} from "@car/ir";
import type {
  Action,
  ActionProposal,
  ActionResult,
  ActionStatus,
  Clock,
  CostBudget,
  CostSummary,
  DependencyGraph,
  IdGenerator,
  JsonObject,
  JsonValue,
  Precondition,
  ProposalResult,
  StateMutation,
} from "@car/ir";
import type { ApprovalGate, PolicyEngine } from "@car/policy";
import { EVENT_KINDS } from "../events/event.ts";
import type { CarEvent, EventKind } from "../events/event.ts";
import type { EventLog } from "../events/event-log.ts";
import type { AssumptionRecord, RuntimeStore } from "../store/runtime-store.ts";
import { WorkingState } from "../store/working-state.ts";
import type { Timers } from "@car/ir";
import type { DetachedInvocations } from "../tools/detached.ts";
import type { ToolCallback } from "../tools/handler.ts";
import type { RateLimiter } from "../tools/rate-limiter.ts";
import { ResultCache } from "../tools/result-cache.ts";
import type { RegisteredTool, ToolRegistry } from "../tools/tool-registry.ts";
import { ActionFailure, failureFrom } from "./action-failure.ts";
import type { Admission } from "./admission.ts";
import { schemaErrorDetail, schemaMessage } from "./admission.ts";
import { CallContext } from "./call-context.ts";
import { callThroughCallback } from "./callback-call.ts";
import { toJsonOutput } from "./tool-output.ts";

/** The rollback warning carried in `error` by succeeded actions of an aborted proposal. */
export const ROLLBACK_WARNING = "proposal aborted; state effects were rolled back; external effects may remain and were not undone";

/** Backoff before retry n (0-based): 100 ms × 2ⁿ. */
export const RETRY_BASE_MS = 100;

/** What a run borrows from its runtime. */
export interface RunEnvironment {
  readonly tools: ToolRegistry;
  readonly cache: ResultCache;
  readonly limiter: RateLimiter;
  readonly detached: DetachedInvocations;
  readonly policies: PolicyEngine;
  readonly store: RuntimeStore;
  readonly clock: Clock;
  readonly timers: Timers;
  readonly ids: IdGenerator;
  readonly maxOutputBytes: number;
  /** Bytes `$id.output` references may put into one proposal's parameters, in all. */
  readonly maxInterpolatedBytes: number;
  /** The tier / approval gate every action passes after the policies, when configured. */
  readonly approvalGate: ApprovalGate | undefined;
}

export interface RunOptions {
  dispatch: ToolCallback | undefined;
  session_id: string | null;
  budget: CostBudget | undefined;
  /** 0 = unlimited. */
  maxConcurrency: number;
  signal: AbortSignal | undefined;
}

const PENDING = 0;
const RUNNING = 1;
const SUCCEEDED = 2;
const FAILED = 3;
const REJECTED = 4;
const SKIPPED = 5;
const STATUS_NAMES: readonly ActionStatus[] = ["validated", "executing", "succeeded", "failed", "rejected", "skipped"];

type Outcome = { output: JsonValue } | ActionFailure;
interface Called {
  outcome: Outcome;
  cached: boolean;
}

interface CallPlan {
  tool: RegisteredTool;
  detached: boolean;
  cacheKey: string | undefined;
  ttl: number | undefined;
  attempts: number;
}

const NO_CHANGES: Record<string, StateMutation> = Object.freeze(emptyMap<StateMutation>());
const NO_DATA: JsonObject = Object.freeze(emptyMap()) as JsonObject;

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === "object" || typeof value === "function") && typeof (value as { then?: unknown }).then === "function";
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return value !== null && typeof value === "object" && typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === "function";
}

export class ProposalRun {
  readonly #env: RunEnvironment;
  readonly #options: RunOptions;
  readonly #proposal: ActionProposal;
  readonly #actions: readonly Action[];
  readonly #graph: DependencyGraph;
  readonly #hasRefs: Uint8Array;
  readonly #working: WorkingState;
  readonly #events: EventLog;

  readonly #status: Uint8Array;
  readonly #terminal: Uint8Array;
  readonly #outputs: JsonValue[];
  /** What this proposal's references have interpolated so far (made on the first reference). */
  #interpolated: InterpolationBudget | undefined;
  readonly #errors: (string | null)[];
  readonly #changes: (Record<string, StateMutation> | undefined)[];
  readonly #durations: Float64Array;
  readonly #stamps: string[];
  readonly #assumptions: AssumptionRecord[] = [];
  readonly #appended: CarEvent[] = [];
  /** Cancels every call or sleep in flight; each entry removes itself when it settles. */
  readonly #inflight = new Set<(reason: string) => void>();
  readonly #startedCache = new Map<string, JsonObject>();

  #toolCalls = 0;
  #retries = 0;
  #startMs = 0;
  /** Why the proposal aborted (state rolled back); undefined while it has not. */
  #abortReason: string | undefined;
  /** Why the rest was skipped without a rollback (a run-time budget ran out). */
  #budgetReason: string | undefined;
  #lastStampMs = Number.NaN;
  #lastStamp = "";

  constructor(env: RunEnvironment, options: RunOptions, proposal: ActionProposal, graph: DependencyGraph, admission: Admission) {
    this.#env = env;
    this.#options = options;
    this.#proposal = proposal;
    this.#actions = proposal.actions;
    this.#graph = graph;
    this.#hasRefs = admission.hasRefs;
    this.#working = new WorkingState(env.store.state);
    this.#events = env.store.events;
    const n = this.#actions.length;
    this.#status = new Uint8Array(n);
    this.#terminal = new Uint8Array(n);
    this.#outputs = new Array<JsonValue>(n).fill(null);
    this.#errors = new Array<string | null>(n).fill(null);
    this.#changes = new Array<Record<string, StateMutation> | undefined>(n);
    this.#durations = new Float64Array(n);
    this.#stamps = new Array<string>(n);
  }

  /** Events appended for this proposal so far, in order (for the commit). */
  get appended(): readonly CarEvent[] {
    return this.#appended;
  }

  // --- events -------------------------------------------------------------

  /** RFC 3339 of the clock, formatted once per distinct millisecond. */
  stamp(): string {
    const ms = this.#env.clock.now();
    if (ms !== this.#lastStampMs) {
      this.#lastStampMs = ms;
      this.#lastStamp = rfc3339(ms);
    }
    return this.#lastStamp;
  }

  emit(kind: EventKind, action_id: string | undefined, data: JsonObject): void {
    const event = action_id === undefined
      ? { kind, proposal_id: this.#proposal.id, timestamp: this.stamp(), data }
      : { kind, proposal_id: this.#proposal.id, action_id, timestamp: this.stamp(), data };
    this.#appended.push(this.#events.append(event));
  }

  // --- admission outcome --------------------------------------------------

  /** Rejects every action at admission: nothing runs. */
  rejectAll(findings: readonly { index: number; message: string }[]): ProposalResult {
    this.#startMs = this.#env.clock.now();
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
      this.#status[i] = REJECTED;
      this.#errors[i] = reason;
      this.#stamps[i] = this.stamp();
      this.emit(EVENT_KINDS.actionRejected, this.#actions[i]!.id, { reason, stage: "admission" });
    }
    return this.#complete("rejected", summary);
  }

  // --- execution ----------------------------------------------------------

  /** Runs every action; resolves once nothing is running any more. */
  execute(): Promise<void> {
    const n = this.#actions.length;
    this.#startMs = this.#env.clock.now();
    for (let i = 0; i < n; i++) this.emit(EVENT_KINDS.actionValidated, this.#actions[i]!.id, NO_DATA);
    const signal = this.#options.signal;
    if (signal?.aborted) this.#abort(`cancelled: ${reasonText(signal.reason)}`);
    const onAbort = (): void => this.#abort(`cancelled: ${reasonText(signal!.reason)}`);
    signal?.addEventListener("abort", onAbort, { once: true });

    const pending = new Int32Array(n);
    const ready: number[] = [];
    for (let i = 0; i < n; i++) {
      pending[i] = this.#graph.preds[i]!.length;
      if (pending[i] === 0) ready.push(i);
    }
    const limit = this.#options.maxConcurrency;
    let head = 0;
    let running = 0;
    let finished = 0;
    let pumping = false;
    return new Promise<void>((resolve) => {
      let resolved = false;
      const complete = (i: number): void => {
        running--;
        finished++;
        for (const s of this.#graph.succs[i]!) if (--pending[s]! === 0) ready.push(s);
      };
      const failed = (i: number, error: unknown): void => {
        // An engine bug must not hang the proposal: record it on the action and abort.
        this.#settle(i, FAILED, `internal error: ${reasonText(error)}`);
        this.#abort(`internal error in action '${this.#actions[i]!.id}'`);
      };
      // Synchronous completions loop here instead of recursing, so a 100k chain of sync tools never grows the stack.
      const pump = (): void => {
        if (pumping) return;
        pumping = true;
        while (head < ready.length && (limit <= 0 || running < limit) && !this.#stopped()) {
          const i = ready[head++]!;
          running++;
          let pendingRun: Promise<void> | void = undefined;
          try {
            pendingRun = this.#runAction(i);
          } catch (error) {
            failed(i, error);
          }
          if (pendingRun === undefined) complete(i);
          else {
            pendingRun.then(
              () => {
                complete(i);
                pump();
              },
              (error: unknown) => {
                failed(i, error);
                complete(i);
                pump();
              },
            );
          }
        }
        pumping = false;
        if (!resolved && running === 0 && (finished === n || this.#stopped() || head >= ready.length)) {
          resolved = true;
          signal?.removeEventListener("abort", onAbort);
          resolve();
        }
      };
      pump();
    });
  }

  #stopped(): boolean {
    return this.#abortReason !== undefined || this.#budgetReason !== undefined;
  }

  #abort(reason: string): void {
    if (this.#abortReason !== undefined) return;
    this.#abortReason = reason;
    for (const cancel of [...this.#inflight]) cancel(`the proposal aborted (${reason})`);
  }

  #stopForBudget(reason: string): void {
    if (this.#budgetReason === undefined) this.#budgetReason = reason;
  }

  /** A run-time budget check before an action starts: over budget, the rest are skipped. */
  #overBudget(action: Action): string | undefined {
    const budget = this.#options.budget;
    if (budget === undefined) return undefined;
    if (budget.max_duration_ms !== undefined && this.#env.clock.now() - this.#startMs > budget.max_duration_ms) {
      return `budget exceeded: the proposal ran longer than ${budget.max_duration_ms} ms`;
    }
    if (action.type === "tool_call" && budget.max_tool_calls !== undefined && this.#toolCalls >= budget.max_tool_calls) {
      return `budget exceeded: ${this.#toolCalls} tool calls made, the budget allows ${budget.max_tool_calls}`;
    }
    return undefined;
  }

  /** Runs one action; returns a promise only when something on its path is asynchronous. */
  #runAction(i: number): Promise<void> | void {
    const action = this.#actions[i]!;
    const overBudget = this.#overBudget(action);
    if (overBudget !== undefined) {
      this.#stopForBudget(overBudget);
      return;
    }
    for (const p of this.#graph.preds[i]!) {
      if (this.#status[p] !== SUCCEEDED) {
        this.#reject(i, `unsatisfied dependency: '${this.#actions[p]!.id}' ${STATUS_NAMES[this.#status[p]!]}`, "dependency");
        return;
      }
    }
    this.#stamps[i] = this.stamp();
    const startMs = this.#env.clock.now();
    this.#status[i] = RUNNING;

    if (action.type !== "assertion" && action.preconditions.length > 0) {
      const checked = evaluatePreconditions(action.preconditions, this.#stateFor(action.preconditions));
      if (!checked.ok) {
        this.#reject(i, checked.message, "precondition");
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
            return j !== undefined && this.#status[j] === SUCCEEDED ? { found: true, value: this.#outputs[j]! } : { found: false };
          },
          this.#interpolated,
        );
      } catch (error) {
        this.#reject(i, reasonText(error), "reference");
        return;
      }
    }
    if (this.#env.policies.size > 0) {
      const subject = params === action.parameters ? action : { ...action, parameters: params };
      const violations = this.#env.policies.check(subject, this.#working);
      if (violations.length > 0) {
        for (const v of violations) this.emit(EVENT_KINDS.policyViolation, action.id, { policy_name: v.policy_name, reason: v.reason });
        this.#reject(i, `denied by policy: ${violations.map((v) => `${v.policy_name}: ${v.reason}`).join("; ")}`, "policy");
        return;
      }
    }

    const gate = this.#env.approvalGate;
    if (gate === undefined) return this.#start(i, action, params, startMs);
    const schema = action.tool === undefined ? undefined : this.#env.tools.get(action.tool)?.schema;
    return gate.authorize(params === action.parameters ? action : { ...action, parameters: params }, schema).then((decision) => {
      const data: JsonObject = { decision: decision.decision, required: decision.required, granted: decision.granted, fingerprint: decision.fingerprint };
      if (decision.reason !== undefined) data["reason"] = decision.reason;
      this.emit(EVENT_KINDS.approvalDecided, action.id, data);
      if (decision.decision !== "allow") {
        this.#reject(i, `denied by approval gate: ${decision.reason ?? `requires ${decision.required}`}`, "approval");
        return;
      }
      if (this.#abortReason !== undefined) return; // aborted while waiting: never started, so skipped
      return this.#start(i, action, params, startMs);
    });
  }

  /** From `action_started` on: state actions run inline, tool calls dispatch. */
  #start(i: number, action: Action, params: JsonObject, startMs: number): Promise<void> | void {
    this.#noteReads(action);
    this.emit(EVENT_KINDS.actionStarted, action.id, this.#startedData(action));
    if (action.type !== "tool_call") {
      this.#conclude(i, startMs, { outcome: this.#runStateAction(action, params), cached: false });
      return;
    }
    const called = this.#callTool(i, action, params);
    if (isThenable(called)) return called.then((c) => this.#conclude(i, startMs, c));
    this.#conclude(i, startMs, called);
  }

  /** Records a finished action; `undefined` means it was already rejected at dispatch. */
  #conclude(i: number, startMs: number, called: Called | undefined): void {
    if (called === undefined) return;
    this.#durations[i] = this.#env.clock.now() - startMs;
    if (called.outcome instanceof ActionFailure) this.#fail(i, called.outcome);
    else this.#succeed(i, called.outcome.output, called.cached);
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

  /** The keys a list of preconditions reads, from the working state, as the record the evaluator takes. */
  #stateFor(preconditions: readonly Precondition[]): Record<string, JsonValue> {
    const out = emptyMap();
    for (const p of preconditions) {
      const value = this.#working.get(p.key);
      if (value !== undefined) setOwn(out, p.key, value);
    }
    return out;
  }

  #noteReads(action: Action): void {
    if (action.read_set.length === 0 && action.state_dependencies.length === 0 && action.assumptions.length === 0 && action.type !== "state_read") return;
    for (const key of effectiveReadSet(action)) this.#working.noteRead(key, action.id);
    for (const a of action.assumptions) {
      const record: AssumptionRecord = { action_id: action.id, key: a.key };
      if (a.expected_value !== undefined) record.expected_value = a.expected_value;
      if (a.read_version !== undefined) record.read_version = a.read_version;
      this.#assumptions.push(record);
    }
  }

  /** `state_write`, `state_read` and `assertion`: no dispatch, effects straight on the working state. */
  #runStateAction(action: Action, params: JsonObject): Outcome {
    switch (action.type) {
      case "state_write": {
        const key = getOwn(params, "key");
        if (typeof key !== "string") return new ActionFailure("a state_write needs a string 'key' parameter", "unknown");
        return { output: getOwn(params, "value") ?? null };
      }
      case "state_read": {
        const key = getOwn(params, "key");
        const keys = getOwn(params, "keys");
        if (typeof key === "string") return { output: this.#working.get(key) ?? null };
        if (Array.isArray(keys) && keys.every((k) => typeof k === "string")) {
          const out = emptyMap();
          for (const k of keys as string[]) setOwn(out, k, this.#working.get(k) ?? null);
          return { output: out };
        }
        return new ActionFailure("a state_read needs a string 'key' or a string array 'keys' parameter", "unknown");
      }
      default: {
        const checked = evaluatePreconditions(action.preconditions, this.#stateFor(action.preconditions));
        return checked.ok ? { output: true } : new ActionFailure(`assertion failed: ${checked.message}`, "unknown");
      }
    }
  }

  /**
   * Dispatches a tool call with caching, rate limiting, timeouts and
   * retries; `undefined` when the call was rejected before dispatch. The
   * common case — no rate limit, a synchronous tool, first attempt — runs
   * without a single promise.
   */
  #callTool(i: number, action: Action, params: JsonObject): Called | undefined | Promise<Called | undefined> {
    const tool = this.#env.tools.get(action.tool!);
    if (tool === undefined) {
      this.#reject(i, `unknown tool '${action.tool}'`, "admission");
      return undefined;
    }
    if (this.#hasRefs[i] === 1 && tool.validateParams !== undefined) {
      const checked = tool.validateParams(params);
      if (!checked.ok) {
        this.#reject(i, schemaMessage(tool.schema.name, checked.errors), "schema");
        return undefined;
      }
    }
    const detached = action.invocation_mode !== "one_shot";
    const ttl = tool.schema.cache_ttl_secs;
    const plan: CallPlan = { tool, detached, cacheKey: undefined, ttl, attempts: action.failure_behavior === "retry" ? 1 + action.max_retries : 1 };
    if (!detached && (action.idempotent || tool.schema.idempotent || ttl !== undefined)) {
      plan.cacheKey = ResultCache.key(tool.schema.name, params);
      const hit = this.#env.cache.get(plan.cacheKey, this.#env.clock.now());
      if (hit !== undefined) return { outcome: hit, cached: true };
    }
    if (tool.schema.rate_limit !== undefined || this.#abortReason !== undefined) return this.#attempts(action, params, plan, 1);
    this.#toolCalls++;
    const first = this.#invoke(action, tool, params, 1, detached);
    if (!isThenable(first)) return this.#afterFirst(action, params, plan, first);
    return first.then((outcome) => this.#afterFirst(action, params, plan, outcome));
  }

  #afterFirst(action: Action, params: JsonObject, plan: CallPlan, outcome: Outcome): Called | Promise<Called> {
    const checked = this.#checkOutput(plan, outcome);
    if (!(checked instanceof ActionFailure) || checked.terminal || plan.attempts <= 1 || this.#abortReason !== undefined) return { outcome: checked, cached: false };
    return this.#attempts(action, params, plan, 2);
  }

  /** The general attempt loop: backoff, budget, rate limit, dispatch, until success or the attempts run out. */
  async #attempts(action: Action, params: JsonObject, plan: CallPlan, from: number): Promise<Called> {
    const { tool } = plan;
    for (let attempt = from; ; attempt++) {
      if (attempt > 1) {
        if (!(await this.#sleep(RETRY_BASE_MS * 2 ** (attempt - 2)))) return { outcome: this.#cancelled(), cached: false };
        const overBudget = this.#overBudget(action);
        if (overBudget !== undefined) {
          this.#stopForBudget(overBudget);
          return { outcome: new ActionFailure(overBudget, "tool_error"), cached: false };
        }
      }
      const limit = tool.schema.rate_limit;
      if (limit !== undefined) {
        const now = (): number => this.#env.clock.now();
        for (let wait = this.#env.limiter.acquire(tool.schema.name, limit, now()); wait > 0; wait = this.#env.limiter.acquire(tool.schema.name, limit, now())) {
          if (wait === Infinity) return { outcome: new ActionFailure(`rate limit of tool '${tool.schema.name}' admits no calls`, "tool_error"), cached: false };
          if (!(await this.#sleep(wait))) return { outcome: this.#cancelled(), cached: false };
        }
      }
      if (this.#abortReason !== undefined) return { outcome: this.#cancelled(), cached: false };
      // A retry counts once it is dispatched, not when one cut off by the budget or an abort was planned.
      if (attempt > 1) this.#retries++;
      this.#toolCalls++;
      let outcome = this.#invoke(action, tool, params, attempt, plan.detached);
      if (isThenable(outcome)) outcome = await outcome;
      const checked = this.#checkOutput(plan, outcome);
      if (!(checked instanceof ActionFailure) || checked.terminal || attempt >= plan.attempts || this.#abortReason !== undefined) return { outcome: checked, cached: false };
    }
  }

  /** Validates a successful output against `returns` and caches it; failures pass through. */
  #checkOutput(plan: CallPlan, outcome: Outcome): Outcome {
    if (outcome instanceof ActionFailure) return outcome;
    if (!plan.detached && plan.tool.validateReturns !== undefined) {
      const checked = plan.tool.validateReturns(outcome.output);
      if (!checked.ok) {
        return new ActionFailure(`output does not match the returns schema of tool '${plan.tool.schema.name}': ${schemaErrorDetail(checked.errors)}`, "validation");
      }
    }
    if (plan.cacheKey !== undefined) this.#env.cache.set(plan.cacheKey, outcome.output, plan.ttl === undefined ? Infinity : this.#env.clock.now() + plan.ttl * 1000);
    return outcome;
  }

  #cancelled(): ActionFailure {
    return new ActionFailure(`cancelled: the proposal aborted (${this.#abortReason ?? "budget"})`, "tool_error");
  }

  /** One dispatch attempt. Synchronous when the tool is. */
  #invoke(action: Action, tool: RegisteredTool, params: JsonObject, attempt: number, detached: boolean): Outcome | Promise<Outcome> {
    const timeout = action.timeout_ms;
    const ctx = new CallContext(action.id, attempt, timeout ?? null, this.#options.session_id, this.#env.ids);
    const dispatch = this.#options.dispatch;
    let raw: unknown;
    try {
      if (tool.handler !== undefined) raw = tool.handler(params, ctx);
      else if (dispatch !== undefined) {
        if (action.invocation_mode === "streaming") {
          return new ActionFailure(`tool '${tool.schema.name}' has no handler, and the JSON callback contract cannot stream: register a streaming handler or use long_running`, "tool_error");
        }
        raw = callThroughCallback(dispatch, tool.schema.name, params, ctx, this.#env.maxOutputBytes);
      } else return new ActionFailure(`tool '${tool.schema.name}' has no handler and no dispatch callback was given`, "tool_error");
    } catch (error) {
      return failureFrom(error);
    }
    if (detached) return this.#startDetached(action, tool, ctx, raw);
    if (!isThenable(raw)) return this.#output(raw);
    return this.#race(raw, ctx, timeout).then((settled) => (settled instanceof ActionFailure ? settled : this.#output(settled.output)));
  }

  #output(value: unknown): Outcome {
    const json = toJsonOutput(value, this.#env.maxOutputBytes);
    return json instanceof ActionFailure ? json : { output: json };
  }

  /**
   * Settles with the call's result, its timeout, or the proposal's abort —
   * whichever comes first. The tool's signal is aborted on timeout and on
   * abort; a result that arrives later is discarded (never applied).
   */
  #race(call: PromiseLike<unknown>, ctx: CallContext, timeout: number | undefined): Promise<{ output: unknown } | ActionFailure> {
    return new Promise((resolve) => {
      let settled = false;
      let timer: unknown;
      const finish = (value: { output: unknown } | ActionFailure): void => {
        if (settled) return;
        settled = true;
        if (timer !== undefined) this.#env.timers.clearTimeout(timer);
        this.#inflight.delete(cancel);
        resolve(value);
      };
      const cancel = (reason: string): void => {
        ctx.abort(new CarError("cancelled", reason));
        finish(new ActionFailure(`cancelled: ${reason}`, "tool_error"));
      };
      this.#inflight.add(cancel);
      if (timeout !== undefined) {
        timer = this.#env.timers.setTimeout(() => {
          const message = `timed out after ${timeout} ms`;
          ctx.abort(new CarError("timeout", message));
          finish(new ActionFailure(message, "timeout"));
        }, timeout);
      }
      call.then(
        (output) => finish({ output }),
        (error: unknown) => finish(failureFrom(error)),
      );
    });
  }

  /** Sleeps on the injected timers; false when the proposal aborted meanwhile. */
  #sleep(ms: number): Promise<boolean> {
    if (this.#abortReason !== undefined) return Promise.resolve(false);
    return new Promise((resolve) => {
      const cancel = (): void => {
        this.#env.timers.clearTimeout(timer);
        this.#inflight.delete(cancel);
        resolve(false);
      };
      const timer = this.#env.timers.setTimeout(() => {
        this.#inflight.delete(cancel);
        resolve(true);
      }, ms);
      this.#inflight.add(cancel);
    });
  }

  /**
   * Starts a detached invocation. Only the start is bounded by `timeout_ms`
   * (a streaming handler may resolve its iterable asynchronously); the
   * invocation itself runs on under its handle until it ends or is cancelled.
   */
  #startDetached(action: Action, tool: RegisteredTool, ctx: CallContext, raw: unknown): Outcome | Promise<Outcome> {
    const handle = this.#env.ids.next().replace(/-/g, "").slice(0, 12);
    const controller = ctx.controller;
    const running = (): Outcome => ({ output: { tool_handle: handle, status: "running" } });
    const maxBytes = this.#env.maxOutputBytes;
    if (action.invocation_mode === "long_running") {
      this.#env.detached.startTask(handle, tool.schema.name, action.id, controller, Promise.resolve(raw), (value) => {
        const json = toJsonOutput(value, maxBytes);
        if (json instanceof ActionFailure) throw new Error(json.message);
        return json;
      });
      return running();
    }
    const begin = (source: unknown): Outcome => {
      if (!isAsyncIterable(source)) return new ActionFailure(`streaming tool '${tool.schema.name}' did not return an async iterable of chunks`, "validation");
      this.#env.detached.startStream(handle, tool.schema.name, action.id, controller, source);
      return running();
    };
    if (!isThenable(raw)) return begin(raw);
    return this.#race(raw, ctx, action.timeout_ms).then((settled) => (settled instanceof ActionFailure ? settled : begin(settled.output)));
  }

  // --- outcomes -----------------------------------------------------------

  #settle(i: number, status: number, error: string | null): void {
    this.#status[i] = status;
    this.#errors[i] = error;
    this.#stamps[i] ??= this.stamp();
  }

  #reject(i: number, reason: string, stage: string): void {
    const action = this.#actions[i]!;
    this.#settle(i, REJECTED, reason);
    this.emit(EVENT_KINDS.actionRejected, action.id, { reason, stage });
    // A rejection is not retried (it would loop): `retry` is treated as `abort`.
    if (action.failure_behavior !== "skip") this.#abort(`action '${action.id}' was rejected: ${reason}`);
  }

  #fail(i: number, failure: ActionFailure): void {
    const action = this.#actions[i]!;
    this.#settle(i, FAILED, failure.message);
    const data: JsonObject = {
      ...this.#digestData(action),
      error_class: action.tool === undefined && failure.errorClass !== "timeout" ? "unknown" : failure.errorClass,
      error: failure.message,
    };
    if (failure.terminal) {
      this.#terminal[i] = 1;
      data["terminal"] = true;
    }
    this.emit(EVENT_KINDS.actionFailed, action.id, data);
    if (failure.terminal || action.failure_behavior !== "skip") this.#abort(`action '${action.id}' failed${failure.terminal ? " terminally" : ""}: ${failure.message}`);
  }

  #succeed(i: number, output: JsonValue, cached: boolean): void {
    const action = this.#actions[i]!;
    this.#outputs[i] = output;
    let changes: Record<string, StateMutation> | undefined;
    const write = (key: string, value: JsonValue): void => {
      changes ??= emptyMap<StateMutation>();
      setOwn(changes, key, this.#working.set(key, value, action.id));
    };
    if (action.type === "state_write") write(getOwn(action.parameters, "key") as string, output);
    for (const key of Object.keys(action.expected_effects)) {
      if (action.type === "state_write" && key === getOwn(action.parameters, "key")) continue;
      write(key, action.expected_effects[key]!);
    }
    this.#changes[i] = changes;
    this.#settle(i, SUCCEEDED, null);
    const data = this.#digestData(action);
    if (cached) data["cached"] = true;
    this.emit(EVENT_KINDS.actionSucceeded, action.id, data);
  }

  #digestData(action: Action): JsonObject {
    const data: JsonObject = { params_digest: paramsDigest(action.parameters), expected_effects: action.expected_effects };
    if (action.tool !== undefined) {
      data["tool"] = action.tool;
      const tool = this.#env.tools.get(action.tool);
      if (tool !== undefined) data["tool_source"] = tool.schema.source;
    }
    return data;
  }

  // --- completion ---------------------------------------------------------

  /** Marks what never ran, applies rollback marks, emits the closing events and builds the result. */
  finish(): ProposalResult {
    const skipReason = this.#abortReason !== undefined ? `not run: ${this.#abortReason}` : `not run: ${this.#budgetReason ?? "the proposal stopped"}`;
    for (let i = 0; i < this.#actions.length; i++) {
      if (this.#status[i] === PENDING || this.#status[i] === RUNNING) {
        this.#settle(i, SKIPPED, skipReason);
        this.emit(EVENT_KINDS.actionSkipped, this.#actions[i]!.id, { reason: skipReason });
      }
    }
    if (this.#abortReason !== undefined) return this.rollback(this.#abortReason);
    this.#emitStateChanges();
    return this.#complete("committed", undefined);
  }

  /** Turns the outcome into a rolled-back one (an abort, or a commit the store refused). */
  rollback(reason: string): ProposalResult {
    this.#abortReason ??= reason;
    this.emit(EVENT_KINDS.proposalRolledBack, undefined, { reason, discarded_writes: this.#working.mutations.length });
    return this.#complete("rolled_back", reason);
  }

  /** Audit one `state_changed` per pending write, with the version it will get at commit. */
  #emitStateChanges(): void {
    const next = new Map<string, number>();
    for (const m of this.#working.mutations) {
      const version = (next.get(m.key) ?? this.#env.store.state.version(m.key)) + 1;
      next.set(m.key, version);
      const data: JsonObject = m.mutation.op === "set" ? { key: m.key, op: "set", value: m.mutation.value, version } : { key: m.key, op: "delete", version };
      this.emit(EVENT_KINDS.stateChanged, m.action_id, data);
    }
  }

  #complete(outcome: "committed" | "rolled_back" | "rejected", reason: string | undefined): ProposalResult {
    const rolledBack = outcome === "rolled_back";
    const results: ActionResult[] = new Array(this.#actions.length);
    const cost: CostSummary = { tool_calls: this.#toolCalls, actions_executed: 0, actions_rejected: 0, actions_skipped: 0, total_duration_ms: 0, retries: this.#retries };
    for (let i = 0; i < this.#actions.length; i++) {
      const status = this.#status[i]!;
      if (status === SUCCEEDED || status === FAILED) cost.actions_executed++;
      else if (status === REJECTED) cost.actions_rejected++;
      else cost.actions_skipped++;
      const r: ActionResult = {
        action_id: this.#actions[i]!.id,
        status: STATUS_NAMES[status]!,
        output: this.#outputs[i]!,
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
    cost.total_duration_ms = this.#env.clock.now() - this.#startMs;
    const data: JsonObject = { outcome, cost: cost as unknown as JsonObject };
    if (reason !== undefined) data["reason"] = reason;
    if (rolledBack) data["external_effects_undone"] = false;
    this.emit(EVENT_KINDS.proposalCompleted, undefined, data);
    return { proposal_id: this.#proposal.id, results, cost };
  }

  /** The commit for this run's outcome. */
  commitInput(outcome: "committed" | "rolled_back" | "rejected") {
    return {
      proposal_id: this.#proposal.id,
      outcome,
      mutations: outcome === "committed" ? this.#working.mutations : [],
      reads: this.#working.reads,
      assumptions: this.#assumptions,
      events: this.#appended,
    };
  }

  get aborted(): boolean {
    return this.#abortReason !== undefined;
  }
}

function reasonText(value: unknown): string {
  if (isCarError(value) || value instanceof Error) return value.message;
  return String(value);
}
