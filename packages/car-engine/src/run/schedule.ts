/**
 * The ready-set scheduler. An action starts the moment its own predecessors
 * (`dependencyEdges`) have finished, never waiting for a whole "level", so a
 * slow branch never holds up an unrelated one; at most `maxConcurrency` run
 * at once (0 = unlimited). It also owns why a run stops early: an abort
 * (state is rolled back, calls in flight are cancelled) or a run-time budget
 * that ran out (the rest is skipped, nothing rolled back).
 */
import { isCarError } from "@car/ir";
import type { DependencyGraph } from "@car/ir";

/** The work the scheduler drives, one action index at a time. */
export interface ScheduledWork {
  /** Runs action i; returns a promise only when something on its path is asynchronous. */
  run(i: number): Promise<void> | void;
  /** Records an engine bug thrown while running action i (the run must not hang). */
  crashed(i: number, error: unknown): void;
}

export class Scheduler {
  /** Why the proposal aborted (state rolled back); undefined while it has not. */
  abortReason: string | undefined;
  /** Why the rest was skipped without a rollback (a run-time budget ran out). */
  budgetReason: string | undefined;
  readonly #graph: DependencyGraph;
  readonly #limit: number;
  readonly #onAbort: (reason: string) => void;

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
    const graph = this.#graph;
    const n = graph.preds.length;
    if (signal?.aborted) this.abort(`cancelled: ${reasonText(signal.reason)}`);
    const onAbort = (): void => this.abort(`cancelled: ${reasonText(signal!.reason)}`);
    signal?.addEventListener("abort", onAbort, { once: true });

    const pending = new Int32Array(n);
    const ready: number[] = [];
    for (let i = 0; i < n; i++) {
      pending[i] = graph.preds[i]!.length;
      if (pending[i] === 0) ready.push(i);
    }
    const limit = this.#limit;
    let head = 0;
    let running = 0;
    let finished = 0;
    let pumping = false;
    return new Promise<void>((resolve) => {
      let resolved = false;
      const complete = (i: number): void => {
        running--;
        finished++;
        for (const s of graph.succs[i]!) if (--pending[s]! === 0) ready.push(s);
      };
      // Synchronous completions loop here instead of recursing, so a 100k chain of sync tools never grows the stack.
      const pump = (): void => {
        if (pumping) return;
        pumping = true;
        while (head < ready.length && (limit <= 0 || running < limit) && !this.stopped) {
          const i = ready[head++]!;
          running++;
          let pendingRun: Promise<void> | void = undefined;
          try {
            pendingRun = work.run(i);
          } catch (error) {
            work.crashed(i, error);
          }
          if (pendingRun === undefined) complete(i);
          else {
            pendingRun.then(
              () => {
                complete(i);
                pump();
              },
              (error: unknown) => {
                work.crashed(i, error);
                complete(i);
                pump();
              },
            );
          }
        }
        pumping = false;
        if (!resolved && running === 0 && (finished === n || this.stopped || head >= ready.length)) {
          resolved = true;
          signal?.removeEventListener("abort", onAbort);
          resolve();
        }
      };
      pump();
    });
  }
}

/** The message of an error or abort reason, whatever was thrown. */
export function reasonText(value: unknown): string {
  if (isCarError(value) || value instanceof Error) return value.message;
  return String(value);
}
