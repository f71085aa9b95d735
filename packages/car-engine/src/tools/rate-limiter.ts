/**
 * Per-tool sliding windows for ToolSchema `rate_limit`. A call that would be
 * the `max_calls + 1`-th in the trailing `interval_secs` waits until the
 * oldest call leaves the window (the engine sleeps on the injected timers),
 * rather than failing: a rate limit paces a plan, it does not break it. Every
 * dispatch attempt takes a slot, detached ones included.
 */
import type { ToolRateLimit } from "@car/ir";

export class RateLimiter {
  readonly #windows = new Map<string, number[]>();

  /**
   * Takes a slot for `tool` at `now` and returns 0, or returns how many ms to
   * wait before asking again (no slot taken). `max_calls` of 0 never admits:
   * the returned wait is Infinity.
   */
  acquire(tool: string, limit: ToolRateLimit, now: number): number {
    if (limit.max_calls <= 0) return Infinity;
    const windowMs = limit.interval_secs * 1000;
    let calls = this.#windows.get(tool);
    if (calls === undefined) this.#windows.set(tool, (calls = []));
    let drop = 0;
    while (drop < calls.length && calls[drop]! <= now - windowMs) drop++;
    if (drop > 0) calls.splice(0, drop);
    if (calls.length < limit.max_calls) {
      calls.push(now);
      return 0;
    }
    return Math.max(1, calls[0]! + windowMs - now);
  }

  /** Puts back a slot taken at `at` (a durable session read back after a restart); slots stay in time order. */
  restore(tool: string, at: number): void {
    let calls = this.#windows.get(tool);
    if (calls === undefined) this.#windows.set(tool, (calls = []));
    let i = calls.length;
    while (i > 0 && calls[i - 1]! > at) i--;
    calls.splice(i, 0, at);
  }

  forget(tool: string): void {
    this.#windows.delete(tool);
  }
}
