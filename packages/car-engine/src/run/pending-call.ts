/**
 * One asynchronous tool call raced against its timeout and the proposal's
 * abort: whichever comes first settles it, and a result that arrives later
 * is discarded (never applied). The tool's signal is aborted on timeout and
 * on abort.
 *
 * It is the only record an asynchronous call costs: no promise of its own
 * and no closures beyond the two handed to the tool's promise. Where the
 * outcome goes is `end`, shared by every call of a dispatcher, and the
 * fields `end` needs to finish the call travel on the record itself.
 */
import { CarError } from "@car/ir";
import type { Action, JsonObject, Timers } from "@car/ir";
import { ActionFailure, failureFrom } from "../tools/action-failure.ts";
import type { CallContext } from "../tools/call-context.ts";
import { InFlight } from "./in-flight.ts";
import type { InFlightList } from "./in-flight.ts";
import type { RegisteredTool } from "../tools/tool-registry.ts";
import type { Called } from "./outcomes.ts";

/** How one call is carried out: decided once, before its first attempt. */
export interface CallPlan {
  readonly tool: RegisteredTool;
  readonly detached: boolean;
  readonly cacheKey: string | undefined;
  readonly ttl: number | undefined;
  readonly attempts: number;
}

/**
 * Hears how a call that did not settle at once ended. `token` is the
 * caller's own number for the call (the pipeline's action index), so one
 * listener serves every call without a closure per call.
 */
export interface CallListener {
  callEnded(token: number, called: Called): void;
  /** An engine bug while finishing the call (the caller must not hang). */
  callCrashed(token: number, error: unknown): void;
}

/** Receives a settled call: `failure` when it failed, timed out or was cancelled, else the tool's raw `output`. */
export type CallEnd = (call: PendingCall, failure: ActionFailure | undefined, output: unknown) => void;

/** What the calls of one dispatcher share: the in-flight list they join, the timers, and where they end. */
export interface CallSite {
  readonly list: InFlightList;
  readonly timers: Timers;
  readonly end: CallEnd;
}

export class PendingCall extends InFlight {
  #settled = false;
  #timer: unknown = undefined;
  /** Shared by the dispatcher's calls, so each record holds one pointer, not three (100k calls can be in flight at once). */
  readonly #site: CallSite;
  readonly #ctx: CallContext;
  /** What `end` needs to finish the call; set by whoever started it (unused fields stay as given). */
  readonly action: Action;
  readonly params: JsonObject;
  readonly startMs: number;
  readonly plan: CallPlan | undefined;
  /** Who hears how a first attempt ended, and the caller's own number for the call (the pipeline's action index). */
  readonly listener: CallListener | undefined;
  readonly token: number;

  constructor(
    site: CallSite,
    ctx: CallContext,
    action: Action,
    params: JsonObject,
    startMs: number,
    plan: CallPlan | undefined,
    listener: CallListener | undefined,
    token: number,
  ) {
    super();
    this.#site = site;
    this.#ctx = ctx;
    this.action = action;
    this.params = params;
    this.startMs = startMs;
    this.plan = plan;
    this.listener = listener;
    this.token = token;
  }

  /** Starts the race: the call's own settlement, its timeout (if the action has one), and `cancel`. */
  watch(call: PromiseLike<unknown>): void {
    this.#site.list.add(this);
    const timeout = this.action.timeout_ms;
    if (timeout !== undefined) this.#timer = this.#site.timers.setTimeout(() => this.timedOut(timeout), timeout);
    // Bound methods rather than two arrow functions: a bound function carries its receiver itself, where
    // arrows also need a context object to share it — about 50 B less per call in flight (100k can be).
    call.then(this.fulfilled.bind(this), this.rejected.bind(this));
  }

  fulfilled(output: unknown): void {
    this.settle(undefined, output);
  }

  rejected(error: unknown): void {
    this.settle(failureFrom(error), undefined);
  }

  cancel(reason: string): void {
    this.#ctx.abort(new CarError("cancelled", reason));
    this.settle(new ActionFailure(`cancelled: ${reason}`, "tool_error"), undefined);
  }

  timedOut(timeout: number): void {
    const message = `timed out after ${timeout} ms`;
    this.#ctx.abort(new CarError("timeout", message));
    this.settle(new ActionFailure(message, "timeout"), undefined);
  }

  /**
   * The first of the call's end, its timeout and `cancel` settles it; the rest are ignored. Public
   * methods rather than `#private` ones: a class with private methods stamps a brand on every
   * instance, 8 B per call in flight.
   */
  settle(failure: ActionFailure | undefined, output: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    const site = this.#site;
    if (this.#timer !== undefined) site.timers.clearTimeout(this.#timer);
    site.list.remove(this);
    site.end(this, failure, output);
  }
}
