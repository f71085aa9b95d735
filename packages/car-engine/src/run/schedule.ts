/**
 * The ready-set scheduler. An action starts the moment its own predecessors
 * (`dependencyEdges`) have finished, never waiting for a whole "level", so a
 * slow branch never holds up an unrelated one; at most `maxConcurrency` run
 * at once (0 = unlimited). It also owns why a run stops early: an abort
 * (state is rolled back, calls in flight are cancelled) or a run-time budget
 * that ran out (the rest is skipped, nothing rolled back).
 */
import { isCarError } from "@car/ir";
import { successorRows } from "@car/ir/internal";
import type { DependencyGraph } from "@car/ir";

/** The work the scheduler drives, one action index at a time. */
export interface ScheduledWork {
  /**
   * Runs action i: true when it finished now; false when something on its
   * path is asynchronous, and the work then calls `Scheduler.done(i)` once
   * it has (no promise per action).
   */
  run(i: number): boolean;
  /** Records an engine bug thrown while running action i (the run must not hang). */
  crashed(i: number, error: unknown): void;
}

const NOTHING = new Int32Array(0);

export class Scheduler {
  /** Why the proposal aborted (state rolled back); undefined while it has not. */
  abortReason: string | undefined;
  /** Why the rest was skipped without a rollback (a run-time budget ran out). */
  budgetReason: string | undefined;
  readonly #graph: DependencyGraph;
  readonly #limit: number;
  readonly #onAbort: (reason: string) => void;
  /** The state of the run in progress (see `run`). */
  #work: ScheduledWork | undefined;
  #signal: AbortSignal | undefined;
  /** The rows below are made by `run`; until then they are the one shared empty array (nothing can be written into it). */
  #pending: Int32Array = NOTHING;
  /** Successors in CSR form (see `successorRows`): typed arrays, not an array per action. */
  #succStart: Int32Array = NOTHING;
  #succs: Int32Array = NOTHING;
  /**
   * Actions ready to start, in the order they became ready, from `#head` to `#tail`. Each enters
   * once, so n slots never grow: a pushed array's regrowth costs 8 ms at 100k actions.
   */
  #ready: Int32Array = NOTHING;
  #head = 0;
  #tail = 0;
  #running = 0;
  #finished = 0;
  #pumping = false;
  #resolve: (() => void) | undefined;
  readonly #signalled = (): void => this.abort(`cancelled: ${reasonText(this.#signal!.reason)}`);

  /** `onAbort` runs once, on the first abort: it cancels whatever is in flight. */
  constructor(graph: DependencyGraph, maxConcurrency: number, onAbort: (reason: string) => void) {
    this.#graph = graph;
    this.#limit = maxConcurrency;
    this.#onAbort = onAbort;
  }

  get stopped(): boolean {
    return this.abortReason !== undefined || this.budgetReason !== undefined;
  }

  /** Aborts the run; the first reason wins. */
  abort(reason: string): void {
    if (this.abortReason !== undefined) return;
    this.abortReason = reason;
    this.#onAbort(reason);
  }

  stopForBudget(reason: string): void {
    if (this.budgetReason === undefined) this.budgetReason = reason;
  }

  /** Runs every action through `work`; resolves once nothing is running any more. */
  run(work: ScheduledWork, signal: AbortSignal | undefined): Promise<void> {
    const { predStart, preds } = this.#graph.flat;
    const n = predStart.length - 1;
    this.#work = work;
    this.#signal = signal;
    if (signal?.aborted) this.abort(`cancelled: ${reasonText(signal.reason)}`);
    signal?.addEventListener("abort", this.#signalled, { once: true });
    const pending = new Int32Array(n);
    const ready = new Int32Array(n);
    let tail = 0;
    for (let i = 0; i < n; i++) {
      pending[i] = predStart[i + 1]! - predStart[i]!;
      if (pending[i] === 0) ready[tail++] = i;
    }
    this.#pending = pending;
    this.#ready = ready;
    this.#tail = tail;
    if (preds.length === 0) {
      // No edges: every row of successors is empty, as every row of predecessors is (read only here, never written).
      this.#succStart = predStart;
      this.#succs = preds;
    } else {
      const successors = successorRows(predStart, preds);
      this.#succStart = successors.succStart;
      this.#succs = successors.succs;
    }
    return new Promise<void>((resolve) => {
      this.#resolve = resolve;
      this.#pump();
    });
  }

  /** Action i, which `run` left going asynchronously, has finished: its successors may become ready. */
  done(i: number): void {
    this.#complete(i);
    this.#pump();
  }

  #complete(i: number): void {
    this.#running--;
    this.#finished++;
    const pending = this.#pending;
    const succs = this.#succs;
    const end = this.#succStart[i + 1]!;
    for (let e = this.#succStart[i]!; e < end; e++) if (--pending[succs[e]!]! === 0) this.#ready[this.#tail++] = succs[e]!;
  }

  // Synchronous completions loop here instead of recursing, so a 100k chain of sync tools never grows the stack.
  #pump(): void {
    if (this.#pumping) return;
    this.#pumping = true;
    const work = this.#work!;
    const ready = this.#ready;
    const limit = this.#limit;
    while (this.#head < this.#tail && (limit <= 0 || this.#running < limit) && !this.stopped) {
      const i = ready[this.#head++]!;
      this.#running++;
      let now = true;
      try {
        now = work.run(i);
      } catch (error) {
        work.crashed(i, error);
      }
      if (now) this.#complete(i);
    }
    this.#pumping = false;
    const resolve = this.#resolve;
    if (resolve !== undefined && this.#running === 0 && (this.#finished === this.#pending.length || this.stopped || this.#head >= this.#tail)) {
      this.#resolve = undefined;
      this.#signal?.removeEventListener("abort", this.#signalled);
      resolve();
    }
  }
}

/** The message of an error or abort reason, whatever was thrown. */
export function reasonText(value: unknown): string {
  if (isCarError(value) || value instanceof Error) return value.message;
  return String(value);
}
