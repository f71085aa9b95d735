/**
 * Dispatch of one tool call: the result / idempotency cache, the rate-limit
 * wait, the attempt loop with exponential backoff, the timeout race, the
 * detached start of streaming and long-running calls, and the set of calls
 * and sleeps in flight that an abort cancels.
 *
 * The common case — no rate limit, first attempt, no tracing — runs without
 * a single promise of the engine's own: a synchronous tool settles inline,
 * and an asynchronous one costs one `PendingCall` record that settles
 * straight into the caller's `CallListener` (no chain of `.then` hops).
 * Timers and abort controllers exist only for calls that need them.
 */
import type { Action, Clock, IdGenerator, JsonObject, Timers } from "@car/ir";
import { context } from "@opentelemetry/api";
import type { RunTracer } from "../telemetry/run-tracer.ts";
import { schemaErrorDetail } from "@car/verify";
import { ActionFailure, failureFrom } from "../tools/action-failure.ts";
import { CallContext } from "../tools/call-context.ts";
import type { DetachedInvocations } from "../tools/detached.ts";
import type { RateLimiter } from "../tools/rate-limiter.ts";
import { ResultCache } from "../tools/result-cache.ts";
import { toolCallOf } from "../tools/tool-call.ts";
import type { ToolCaller } from "../tools/tool-call.ts";
import type { RegisteredTool } from "../tools/tool-registry.ts";
import { toJsonOutput } from "../tools/tool-output.ts";
import type { CostMeter } from "./cost-meter.ts";
import type { Called, Outcome } from "./outcomes.ts";
import type { RunEvents } from "./run-events.ts";
import { EVENT_KINDS, type EventData } from "../events/event-kinds.ts";
import { InFlight, InFlightList } from "./in-flight.ts";
import { PendingCall } from "./pending-call.ts";
import type { CallEnd, CallListener, CallPlan, CallSite } from "./pending-call.ts";
import type { Scheduler } from "./schedule.ts";

/** Backoff before retry n (0-based): 100 ms × 2ⁿ. */
export const RETRY_BASE_MS = 100;

/**
 * Per registered tool: the plan of a plain call (one attempt, attached, not
 * cached), shared by every such call of every run, as nothing in it changes
 * (a tool registered again is a new entry).
 */
const PLAIN_PLANS = new WeakMap<RegisteredTool, CallPlan>();

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

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === "object" || typeof value === "function") && typeof (value as { then?: unknown }).then === "function";
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return value !== null && typeof value === "object" && typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === "function";
}

export class Dispatcher {
  readonly #env: DispatchEnvironment;
  /** Where calls to tools without a handler go (the JSON callback or a transport), if anywhere. */
  readonly #caller: ToolCaller | undefined;
  readonly #sessionId: string | null;
  readonly #meter: CostMeter;
  readonly #scheduler: Scheduler;
  readonly #tracer: RunTracer | undefined;
  /** The run's events: retries and rate-limit waits as they happen, failed attempts, dispatch intents. */
  readonly #events: RunEvents;
  /** Every call or sleep in flight, for an abort to cancel; each entry removes itself when it settles. */
  readonly #inflight = new InFlightList();
  /** Where asynchronous first attempts on the common path end (`#firstEnded`). */
  readonly #firstCalls: CallSite;
  /** Finishes an asynchronous first attempt: output check, the attempt's record, retries if any remain, then its listener. */
  readonly #firstEnded: CallEnd = (call, failure, output) => {
    let called: Called | Promise<Called>;
    try {
      called = this.#afterFirst(call.action, call.params, call.plan!, failure ?? this.#output(output), call.startMs);
    } catch (error) {
      call.listener!.callCrashed(call.token, error);
      return;
    }
    if (isThenable(called)) this.#later(called, call.listener!, call.token);
    else call.listener!.callEnded(call.token, called);
  };

  constructor(
    env: DispatchEnvironment,
    caller: ToolCaller | undefined,
    sessionId: string | null,
    meter: CostMeter,
    scheduler: Scheduler,
    events: RunEvents,
    tracer?: RunTracer,
  ) {
    this.#env = env;
    this.#events = events;
    this.#caller = caller;
    this.#sessionId = sessionId;
    this.#meter = meter;
    this.#scheduler = scheduler;
    this.#tracer = tracer;
    this.#firstCalls = { list: this.#inflight, timers: env.timers, end: this.#firstEnded };
  }

  /** Cancels every call and backoff sleep in flight (the run aborted). */
  cancelAll(reason: string): void {
    this.#inflight.cancelAll(`the proposal aborted (${reason})`);
  }

  /** Dispatches a tool call with caching, rate limiting, timeouts and retries; always settles through a promise. */
  call(action: Action, tool: RegisteredTool, params: JsonObject): Promise<Called> {
    return new Promise((resolve, reject) => {
      const now = this.dispatch(action, tool, params, { callEnded: (_, called) => resolve(called), callCrashed: (_, error) => reject(error) }, 0);
      if (now !== undefined) resolve(now);
    });
  }

  /**
   * Dispatches a tool call with caching, rate limiting, timeouts and
   * retries. Returns what it came to when that is known at once; otherwise
   * `undefined`, and `listener` hears it later under `token`.
   */
  dispatch(action: Action, tool: RegisteredTool, params: JsonObject, listener: CallListener, token: number): Called | undefined {
    const detached = action.invocation_mode !== "one_shot";
    const ttl = tool.schema.cache_ttl_secs;
    const attempts = action.failure_behavior === "retry" ? 1 + action.max_retries : 1;
    let plan: CallPlan;
    if (!detached && (action.idempotent || tool.schema.idempotent || ttl !== undefined)) {
      plan = { tool, detached, cacheKey: ResultCache.key(tool.schema.name, params), ttl, attempts };
      const hit = this.#env.cache.get(plan.cacheKey!, this.#env.clock.now());
      if (hit !== undefined) return { outcome: hit, cached: true };
    } else if (detached || attempts !== 1) plan = { tool, detached, cacheKey: undefined, ttl, attempts };
    else plan = this.#plainPlan(tool);
    if (tool.schema.rate_limit !== undefined || this.#scheduler.abortReason !== undefined)
      return this.#later(this.#attempts(action, params, plan, 1), listener, token);
    this.#meter.toolCalls++;
    const startMs = this.#env.clock.now();
    // Traced, detached and durable calls (whose intent must be on disk first) take the general path.
    if (this.#tracer !== undefined || detached || this.#events.durable) {
      const first = this.#invoke(action, tool, params, 1, detached);
      if (!isThenable(first)) return this.#now(this.#afterFirst(action, params, plan, first, startMs), listener, token);
      return this.#later(
        first.then((outcome) => this.#afterFirst(action, params, plan, outcome, startMs)),
        listener,
        token,
      );
    }
    // The common path, as #attempt without its span or promise: an asynchronous call becomes one PendingCall.
    const ctx = this.#context(action, 1);
    let raw: unknown;
    try {
      raw = this.#run(action, tool, params, ctx);
    } catch (error) {
      return this.#now(this.#afterFirst(action, params, plan, failureFrom(error), startMs), listener, token);
    }
    if (!isThenable(raw)) return this.#now(this.#afterFirst(action, params, plan, this.#output(raw), startMs), listener, token);
    new PendingCall(this.#firstCalls, ctx, action, params, startMs, plan, listener, token).watch(raw);
    return undefined;
  }

  #plainPlan(tool: RegisteredTool): CallPlan {
    let plan = PLAIN_PLANS.get(tool);
    if (plan === undefined) {
      plan = Object.freeze({ tool, detached: false, cacheKey: undefined, ttl: undefined, attempts: 1 });
      PLAIN_PLANS.set(tool, plan);
    }
    return plan;
  }

  /** A result known now, unless it is still a promise (a retry after a failed first attempt). */
  #now(called: Called | Promise<Called>, listener: CallListener, token: number): Called | undefined {
    return isThenable(called) ? this.#later(called, listener, token) : called;
  }

  /** Hands a promised result to `listener` when it settles. */
  #later(called: Promise<Called>, listener: CallListener, token: number): undefined {
    called.then(
      (c) => listener.callEnded(token, c),
      (error: unknown) => listener.callCrashed(token, error),
    );
    return undefined;
  }

  #afterFirst(action: Action, params: JsonObject, plan: CallPlan, outcome: Outcome, startMs: number): Called | Promise<Called> {
    const checked = this.#checkOutput(plan, outcome);
    this.#noteAttempt(action, 1, checked, startMs);
    if (!(checked instanceof ActionFailure) || checked.terminal || plan.attempts <= 1 || this.#scheduler.abortReason !== undefined)
      return { outcome: checked, cached: false };
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
        this.#events.emit(EVENT_KINDS.actionRetrying, action.id, { attempt, delay_ms: delay, error: previous?.message ?? null });
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
          this.#events.emit(EVENT_KINDS.actionWaiting, action.id, { reason: "rate_limit", wait_ms: wait, tool: tool.schema.name });
          if (!(await this.#sleep(wait))) return { outcome: this.#cancelled(), cached: false };
        }
      }
      if (scheduler.abortReason !== undefined) return { outcome: this.#cancelled(), cached: false };
      // A retry counts once it is dispatched, not when one cut off by the budget or an abort was planned.
      if (attempt > 1) this.#meter.retries++;
      this.#meter.toolCalls++;
      const startMs = this.#env.clock.now();
      let outcome = this.#invoke(action, tool, params, attempt, plan.detached);
      if (isThenable(outcome)) outcome = await outcome;
      const checked = this.#checkOutput(plan, outcome);
      this.#noteAttempt(action, attempt, checked, startMs);
      if (!(checked instanceof ActionFailure) || checked.terminal || attempt >= plan.attempts || scheduler.abortReason !== undefined)
        return { outcome: checked, cached: false };
      previous = checked;
    }
  }

  /** Validates a successful output against `returns` and caches it; failures pass through. */
  #checkOutput(plan: CallPlan, outcome: Outcome): Outcome {
    if (outcome instanceof ActionFailure) return outcome;
    if (!plan.detached && plan.tool.validateReturns !== undefined) {
      const checked = plan.tool.validateReturns(outcome.output);
      if (!checked.ok) {
        return new ActionFailure(
          `output does not match the returns schema of tool '${plan.tool.schema.name}': ${schemaErrorDetail(checked.errors)}`,
          "validation",
        );
      }
    }
    if (plan.cacheKey !== undefined)
      this.#env.cache.set(plan.cacheKey, outcome.output, plan.ttl === undefined ? Infinity : this.#env.clock.now() + plan.ttl * 1000);
    return outcome;
  }

  /** Every dispatched attempt that failed is on the record: number, error class, duration — never the parameters. */
  #noteAttempt(action: Action, attempt: number, outcome: Outcome, startMs: number): void {
    if (!(outcome instanceof ActionFailure)) return;
    const data: EventData["attempt_failed"] = { attempt, error_class: outcome.errorClass, duration_ms: this.#env.clock.now() - startMs };
    if (outcome.terminal) data.terminal = true;
    this.#events.emit(EVENT_KINDS.attemptFailed, action.id, data);
  }

  #cancelled(): ActionFailure {
    return new ActionFailure(`cancelled: the proposal aborted (${this.#scheduler.abortReason ?? "budget"})`, "tool_error");
  }

  /**
   * One dispatch attempt. On a durable log its intent is on disk before the
   * tool can act (a crash then leaves it for recovery to list); a log that
   * groups the intents of one turn into one write answers with a promise.
   */
  #invoke(action: Action, tool: RegisteredTool, params: JsonObject, attempt: number, detached: boolean): Outcome | Promise<Outcome> {
    const written = this.#events.durable ? this.#events.emitDurable(EVENT_KINDS.dispatchIntent, action.id, { attempt, tool: tool.schema.name }) : undefined;
    if (written === undefined) return this.#traced(action, tool, params, attempt, detached);
    return written.then(
      () => this.#traced(action, tool, params, attempt, detached),
      (error: unknown) =>
        new ActionFailure(`the dispatch intent was not written, so the tool was not called: ${failureFrom(error).message}`, "tool_error", true),
    );
  }

  /** One dispatch attempt, inside its own span when the run is traced. */
  #traced(action: Action, tool: RegisteredTool, params: JsonObject, attempt: number, detached: boolean): Outcome | Promise<Outcome> {
    if (this.#tracer === undefined) return this.#attempt(action, tool, params, attempt, detached, undefined);
    const trace = this.#tracer.attempt(action.id, attempt);
    const ended = (outcome: Outcome): Outcome => {
      trace.end(outcome instanceof ActionFailure ? { message: outcome.message, errorClass: outcome.errorClass } : undefined);
      return outcome;
    };
    const outcome = context.with(trace.context, () => this.#attempt(action, tool, params, attempt, detached, trace.traceparent));
    return isThenable(outcome) ? outcome.then(ended) : ended(outcome);
  }

  /** One dispatch attempt. Synchronous when the tool is. */
  #attempt(
    action: Action,
    tool: RegisteredTool,
    params: JsonObject,
    attempt: number,
    detached: boolean,
    traceparent: string | undefined,
  ): Outcome | Promise<Outcome> {
    const ctx = this.#context(action, attempt);
    if (traceparent !== undefined) ctx.traceparent = traceparent;
    let raw: unknown;
    try {
      raw = this.#run(action, tool, params, ctx);
    } catch (error) {
      return failureFrom(error);
    }
    if (detached) return this.#startDetached(action, tool, ctx, raw);
    if (!isThenable(raw)) return this.#output(raw);
    return this.#race(raw, ctx, action, this.#output);
  }

  /** The attempt's `ctx` (its dispatch intent, on a durable log, is `#invoke`'s). */
  #context(action: Action, attempt: number): CallContext {
    return new CallContext(action.id, attempt, action.timeout_ms ?? null, this.#sessionId, this.#env.ids);
  }

  /** Calls the tool's handler, or the caller for tools without one; throws what failed (an ActionFailure when there is nothing to call). */
  #run(action: Action, tool: RegisteredTool, params: JsonObject, ctx: CallContext): unknown {
    if (tool.handler !== undefined) return tool.handler(params, ctx);
    const caller = this.#caller;
    if (caller === undefined) throw new ActionFailure(`tool '${tool.schema.name}' has no handler and no dispatch callback was given`, "tool_error");
    if (action.invocation_mode === "streaming") {
      throw new ActionFailure(
        `tool '${tool.schema.name}' has no handler, and the JSON callback contract cannot stream: register a streaming handler or use long_running`,
        "tool_error",
      );
    }
    return caller(toolCallOf(tool.schema.name, params, ctx), ctx.signal);
  }

  /** The tool's answer as an outcome (checked, detached JSON); shared, so passing it makes no closure. */
  readonly #output = (value: unknown): Outcome => {
    const json = toJsonOutput(value, this.#env.maxOutputBytes);
    return json instanceof ActionFailure ? json : { output: json };
  };

  /** Races `call` (see PendingCall) and settles with `map` of its output, or with why it failed. */
  #race(call: PromiseLike<unknown>, ctx: CallContext, action: Action, map: (output: unknown) => Outcome): Promise<Outcome> {
    return new Promise((resolve) => {
      const site: CallSite = { list: this.#inflight, timers: this.#env.timers, end: (_, failure, output) => resolve(failure ?? map(output)) };
      new PendingCall(site, ctx, action, action.parameters, 0, undefined, undefined, 0).watch(call);
    });
  }

  /** Sleeps on the injected timers; false when the proposal aborted meanwhile. */
  #sleep(ms: number): Promise<boolean> {
    if (this.#scheduler.abortReason !== undefined) return Promise.resolve(false);
    return new Promise((resolve) => this.#inflight.add(new Sleep(this.#inflight, this.#env.timers, ms, resolve)));
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
    return this.#race(raw, ctx, action, begin);
  }
}

/** A backoff or rate-limit sleep: resolves true when it ran out, false when cancelled. */
class Sleep extends InFlight {
  readonly #list: InFlightList;
  readonly #timers: Timers;
  readonly #timer: unknown;
  readonly #resolve: (ran: boolean) => void;

  constructor(list: InFlightList, timers: Timers, ms: number, resolve: (ran: boolean) => void) {
    super();
    this.#list = list;
    this.#timers = timers;
    this.#resolve = resolve;
    this.#timer = timers.setTimeout(() => {
      this.#list.remove(this);
      resolve(true);
    }, ms);
  }

  cancel(): void {
    this.#timers.clearTimeout(this.#timer);
    this.#list.remove(this);
    this.#resolve(false);
  }
}
