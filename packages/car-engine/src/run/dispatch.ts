/**
 * Dispatch of one tool call: the result / idempotency cache, the rate-limit
 * wait, the attempt loop with exponential backoff, the timeout race, the
 * detached start of streaming and long-running calls, and the set of calls
 * and sleeps in flight that an abort cancels.
 *
 * The common case — no rate limit, a synchronous tool, first attempt — runs
 * without a single promise; timers and abort controllers exist only for
 * calls that are actually asynchronous.
 */
import { CarError } from "@car/ir";
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
import { EVENT_KINDS } from "../events/event.ts";
import type { Scheduler } from "./schedule.ts";

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
  /** Cancels every call or sleep in flight; each entry removes itself when it settles. */
  readonly #inflight = new Set<(reason: string) => void>();

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
  }

  /** Cancels every call and backoff sleep in flight (the run aborted). */
  cancelAll(reason: string): void {
    for (const cancel of [...this.#inflight]) cancel(`the proposal aborted (${reason})`);
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
    const startMs = this.#env.clock.now();
    const first = this.#invoke(action, tool, params, 1, detached);
    if (!isThenable(first)) return this.#afterFirst(action, params, plan, first, startMs);
    return first.then((outcome) => this.#afterFirst(action, params, plan, outcome, startMs));
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
    const data: JsonObject = { attempt, error_class: outcome.errorClass, duration_ms: this.#env.clock.now() - startMs };
    if (outcome.terminal) data["terminal"] = true;
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
    const timeout = action.timeout_ms;
    const ctx = new CallContext(action.id, attempt, timeout ?? null, this.#sessionId, this.#env.ids);
    if (traceparent !== undefined) ctx.traceparent = traceparent;
    const caller = this.#caller;
    let raw: unknown;
    try {
      if (tool.handler !== undefined) raw = tool.handler(params, ctx);
      else if (caller !== undefined) {
        if (action.invocation_mode === "streaming") {
          return new ActionFailure(
            `tool '${tool.schema.name}' has no handler, and the JSON callback contract cannot stream: register a streaming handler or use long_running`,
            "tool_error",
          );
        }
        raw = caller(toolCallOf(tool.schema.name, params, ctx), ctx.signal);
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
    if (this.#scheduler.abortReason !== undefined) return Promise.resolve(false);
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
}
