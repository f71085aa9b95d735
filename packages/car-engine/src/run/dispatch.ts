/**
 * Dispatch of one tool call: the result / idempotency cache, the rate-limit
 * wait, the attempt loop with exponential backoff, the timeout race, the
 * detached start of streaming and long-running calls, and the set of calls
 * and sleeps in flight that an abort cancels.
 *
 * The common case — no rate limit, a synchronous tool, first attempt — runs
 * without a single promise; timers and abort controllers exist only for
 * calls that are actually asynchronous. An asynchronous first attempt costs
 * one promise and one `PendingCall` record: the call settles it straight to
 * the final `Called` (output checked), without a chain of `.then` hops.
 */
import { CarError } from "@car/ir";
import type { Action, Clock, IdGenerator, JsonObject, Timers } from "@car/ir";
import { schemaErrorDetail } from "@car/verify";
import { ActionFailure, failureFrom } from "../tools/action-failure.ts";
import { CallContext } from "../tools/call-context.ts";
import { callThroughCallback } from "../tools/callback-call.ts";
import type { DetachedInvocations } from "../tools/detached.ts";
import type { ToolCallback } from "../tools/handler.ts";
import type { RateLimiter } from "../tools/rate-limiter.ts";
import { ResultCache } from "../tools/result-cache.ts";
import type { RegisteredTool } from "../tools/tool-registry.ts";
import { toJsonOutput } from "../tools/tool-output.ts";
import type { CostMeter } from "./cost-meter.ts";
import type { Called, Outcome } from "./outcomes.ts";
import type { Scheduler } from "./schedule.ts";
import type { RunEvents } from "./run-events.ts";
import { EVENT_KINDS } from "../events/event.ts";

/** Backoff before retry n (0-based): 100 ms × 2ⁿ. */
export const RETRY_BASE_MS = 100;

/** What dispatch borrows from the runtime. */
export interface DispatchEnvironment {
  readonly cache: ResultCache;
  readonly limiter: RateLimiter;
  readonly detached: DetachedInvocations;
  readonly clock: Clock;
  readonly timers: Timers;
  readonly ids: IdGenerator;
  readonly maxOutputBytes: number;
}

interface CallPlan {
  tool: RegisteredTool;
  detached: boolean;
  cacheKey: string | undefined;
  ttl: number | undefined;
  attempts: number;
}

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === "object" || typeof value === "function") && typeof (value as { then?: unknown }).then === "function";
}

/** Something in flight that an abort cancels: a call being raced, or a backoff sleep. */
interface Cancellable {
  cancel(reason: string): void;
}

/**
 * One asynchronous call being raced against its timeout and the proposal's
 * abort. Whichever comes first settles it; a result that arrives later is
 * discarded (never applied). `map` turns the settled value into what the
 * caller awaits — shared per dispatcher, so no closure is made per call.
 */
class PendingCall<T> implements Cancellable {
  #settled = false;
  #timer: unknown;
  readonly #resolve: (value: T | PromiseLike<T>) => void;
  readonly #owner: Set<Cancellable>;
  readonly #timers: Timers;
  readonly #ctx: CallContext;
  readonly #map: (settled: { output: unknown } | ActionFailure, call: PendingCall<T>) => T | PromiseLike<T>;
  /** What `map` needs to finish the call (the first attempt's action, parameters and plan). */
  readonly action: Action;
  readonly params: JsonObject;
  readonly plan: CallPlan | undefined;

  constructor(
    resolve: (value: T | PromiseLike<T>) => void,
    owner: Set<Cancellable>,
    timers: Timers,
    ctx: CallContext,
    map: (settled: { output: unknown } | ActionFailure, call: PendingCall<T>) => T | PromiseLike<T>,
    action: Action,
    params: JsonObject,
    plan: CallPlan | undefined,
  ) {
    this.#resolve = resolve;
    this.#owner = owner;
    this.#timers = timers;
    this.#ctx = ctx;
    this.#map = map;
    this.action = action;
    this.params = params;
    this.plan = plan;
    owner.add(this);
    const timeout = action.timeout_ms;
    if (timeout !== undefined) this.#timer = timers.setTimeout(() => this.#timedOut(timeout), timeout);
  }

  /** Starts the race; `call`'s own settlement is one of its runners. */
  watch(call: PromiseLike<unknown>): void {
    call.then(
      (output) => this.#finish({ output }),
      (error: unknown) => this.#finish(failureFrom(error)),
    );
  }

  cancel(reason: string): void {
    this.#ctx.abort(new CarError("cancelled", reason));
    this.#finish(new ActionFailure(`cancelled: ${reason}`, "tool_error"));
  }

  #timedOut(timeout: number): void {
    const message = `timed out after ${timeout} ms`;
    this.#ctx.abort(new CarError("timeout", message));
    this.#finish(new ActionFailure(message, "timeout"));
  }

  #finish(value: { output: unknown } | ActionFailure): void {
    if (this.#settled) return;
    this.#settled = true;
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    this.#owner.delete(this);
    let mapped: T | PromiseLike<T>;
    try {
      mapped = this.#map(value, this);
    } catch (error) {
      mapped = Promise.reject(error);
    }
    this.#resolve(mapped);
  }
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return value !== null && typeof value === "object" && typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === "function";
}

export class Dispatcher {
  readonly #env: DispatchEnvironment;
  readonly #callback: ToolCallback | undefined;
  readonly #sessionId: string | null;
  readonly #meter: CostMeter;
  readonly #scheduler: Scheduler;
  /** Where retries and rate-limit waits are announced as they happen (progress, the run report). */
  readonly #events: RunEvents | undefined;
  /** Cancels every call or sleep in flight; each entry removes itself when it settles. */
  readonly #inflight = new Set<Cancellable>();
  /** Finishes an asynchronous first attempt: output conversion and check, then retries if any remain. */
  readonly #finishFirst = (settled: { output: unknown } | ActionFailure, call: PendingCall<Called>): Called | Promise<Called> =>
    this.#afterFirst(call.action, call.params, call.plan!, settled instanceof ActionFailure ? settled : this.#output(settled.output));
  /** Finishes a later attempt, awaited inside the attempt loop. */
  readonly #finishLater = (settled: { output: unknown } | ActionFailure): Outcome => (settled instanceof ActionFailure ? settled : this.#output(settled.output));

  constructor(env: DispatchEnvironment, callback: ToolCallback | undefined, sessionId: string | null, meter: CostMeter, scheduler: Scheduler, events?: RunEvents) {
    this.#events = events;
    this.#env = env;
    this.#callback = callback;
    this.#sessionId = sessionId;
    this.#meter = meter;
    this.#scheduler = scheduler;
  }

  /** Cancels every call and backoff sleep in flight (the run aborted). */
  cancelAll(reason: string): void {
    for (const entry of [...this.#inflight]) entry.cancel(`the proposal aborted (${reason})`);
  }

  /** Dispatches a tool call with caching, rate limiting, timeouts and retries. */
  call(action: Action, tool: RegisteredTool, params: JsonObject): Called | Promise<Called> {
    const detached = action.invocation_mode !== "one_shot";
    const ttl = tool.schema.cache_ttl_secs;
    const plan: CallPlan = { tool, detached, cacheKey: undefined, ttl, attempts: action.failure_behavior === "retry" ? 1 + action.max_retries : 1 };
    if (!detached && (action.idempotent || tool.schema.idempotent || ttl !== undefined)) {
      plan.cacheKey = ResultCache.key(tool.schema.name, params);
      const hit = this.#env.cache.get(plan.cacheKey, this.#env.clock.now());
      if (hit !== undefined) return { outcome: hit, cached: true };
    }
    if (tool.schema.rate_limit !== undefined || this.#scheduler.abortReason !== undefined) return this.#attempts(action, params, plan, 1);
    this.#meter.toolCalls++;
    const first = this.#invoke(action, tool, params, 1, plan);
    if (!isThenable(first)) return this.#afterFirst(action, params, plan, first);
    return first as Promise<Called>;
  }

  #afterFirst(action: Action, params: JsonObject, plan: CallPlan, outcome: Outcome): Called | Promise<Called> {
    const checked = this.#checkOutput(plan, outcome);
    if (!(checked instanceof ActionFailure) || checked.terminal || plan.attempts <= 1 || this.#scheduler.abortReason !== undefined) return { outcome: checked, cached: false };
    return this.#attempts(action, params, plan, 2, checked);
  }

  /** The general attempt loop: backoff, budget, rate limit, dispatch, until success or the attempts run out. */
  async #attempts(action: Action, params: JsonObject, plan: CallPlan, from: number, firstFailure?: ActionFailure): Promise<Called> {
    const { tool } = plan;
    const scheduler = this.#scheduler;
    let previous = firstFailure;
    for (let attempt = from; ; attempt++) {
      if (attempt > 1) {
        const delay = RETRY_BASE_MS * 2 ** (attempt - 2);
        this.#events?.emit(EVENT_KINDS.actionRetrying, action.id, { attempt, delay_ms: delay, error: previous?.message ?? null });
        if (!(await this.#sleep(delay))) return { outcome: this.#cancelled(), cached: false };
        const overBudget = this.#meter.exceeded(action);
        if (overBudget !== undefined) {
          scheduler.stopForBudget(overBudget);
          return { outcome: new ActionFailure(overBudget, "tool_error"), cached: false };
        }
      }
      const limit = tool.schema.rate_limit;
      if (limit !== undefined) {
        const now = (): number => this.#env.clock.now();
        for (let wait = this.#env.limiter.acquire(tool.schema.name, limit, now()); wait > 0; wait = this.#env.limiter.acquire(tool.schema.name, limit, now())) {
          if (wait === Infinity) return { outcome: new ActionFailure(`rate limit of tool '${tool.schema.name}' admits no calls`, "tool_error"), cached: false };
          this.#events?.emit(EVENT_KINDS.actionWaiting, action.id, { reason: "rate_limit", wait_ms: wait, tool: tool.schema.name });
          if (!(await this.#sleep(wait))) return { outcome: this.#cancelled(), cached: false };
        }
      }
      if (scheduler.abortReason !== undefined) return { outcome: this.#cancelled(), cached: false };
      // A retry counts once it is dispatched, not when one cut off by the budget or an abort was planned.
      if (attempt > 1) this.#meter.retries++;
      this.#meter.toolCalls++;
      let outcome = this.#invoke(action, tool, params, attempt, undefined);
      if (isThenable(outcome)) outcome = (await outcome) as Outcome;
      const checked = this.#checkOutput(plan, outcome);
      if (!(checked instanceof ActionFailure) || checked.terminal || attempt >= plan.attempts || scheduler.abortReason !== undefined) return { outcome: checked, cached: false };
      previous = checked;
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
    return new ActionFailure(`cancelled: the proposal aborted (${this.#scheduler.abortReason ?? "budget"})`, "tool_error");
  }

  /**
   * One dispatch attempt. Synchronous when the tool is. `first` is the plan
   * of a first attempt: an asynchronous call then settles straight to the
   * final `Called`; later attempts settle to their `Outcome`.
   */
  #invoke(action: Action, tool: RegisteredTool, params: JsonObject, attempt: number, first: CallPlan | undefined): Outcome | Promise<Outcome | Called> {
    const detached = action.invocation_mode !== "one_shot";
    const ctx = new CallContext(action.id, attempt, action.timeout_ms ?? null, this.#sessionId, this.#env.ids);
    const callback = this.#callback;
    let raw: unknown;
    try {
      if (tool.handler !== undefined) raw = tool.handler(params, ctx);
      else if (callback !== undefined) {
        if (action.invocation_mode === "streaming") {
          return new ActionFailure(`tool '${tool.schema.name}' has no handler, and the JSON callback contract cannot stream: register a streaming handler or use long_running`, "tool_error");
        }
        raw = callThroughCallback(callback, tool.schema.name, params, ctx, this.#env.maxOutputBytes);
      } else return new ActionFailure(`tool '${tool.schema.name}' has no handler and no dispatch callback was given`, "tool_error");
    } catch (error) {
      return failureFrom(error);
    }
    if (detached) {
      const started = this.#startDetached(action, tool, ctx, raw);
      if (first === undefined || !isThenable(started)) return started;
      return started.then((outcome) => this.#afterFirst(action, params, first, outcome));
    }
    if (!isThenable(raw)) return this.#output(raw);
    if (first !== undefined) return this.#race(raw, ctx, action, params, first, this.#finishFirst);
    return this.#race(raw, ctx, action, params, undefined, this.#finishLater);
  }

  #output(value: unknown): Outcome {
    const json = toJsonOutput(value, this.#env.maxOutputBytes);
    return json instanceof ActionFailure ? json : { output: json };
  }

  /**
   * Settles with `map` of the call's result, its timeout, or the proposal's
   * abort — whichever comes first. The tool's signal is aborted on timeout
   * and on abort; a result that arrives later is discarded (never applied).
   */
  #race<T>(
    call: PromiseLike<unknown>,
    ctx: CallContext,
    action: Action,
    params: JsonObject,
    plan: CallPlan | undefined,
    map: (settled: { output: unknown } | ActionFailure, pending: PendingCall<T>) => T | PromiseLike<T>,
  ): Promise<T> {
    let pending!: PendingCall<T>;
    const settled = new Promise<T>((resolve) => {
      pending = new PendingCall(resolve, this.#inflight, this.#env.timers, ctx, map, action, params, plan);
    });
    pending.watch(call);
    return settled;
  }

  /** Sleeps on the injected timers; false when the proposal aborted meanwhile. */
  #sleep(ms: number): Promise<boolean> {
    if (this.#scheduler.abortReason !== undefined) return Promise.resolve(false);
    return new Promise((resolve) => {
      const entry: Cancellable = {
        cancel: () => {
          this.#env.timers.clearTimeout(timer);
          this.#inflight.delete(entry);
          resolve(false);
        },
      };
      const timer = this.#env.timers.setTimeout(() => {
        this.#inflight.delete(entry);
        resolve(true);
      }, ms);
      this.#inflight.add(entry);
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
    return this.#race(raw, ctx, action, {}, undefined, (settled) => (settled instanceof ActionFailure ? settled : begin(settled.output)));
  }
}
