/**
 * Timers are injected next to the Clock and the IdGenerator so that retries,
 * backoff and timeouts can be driven by a test instead of by wall-clock time.
 * The engine clears every timer it sets, so a finished proposal never keeps
 * the process alive.
 */
import type { Clock } from "./clock.ts";

/** An opaque handle returned by `Timers.setTimeout`. */
export type TimerId = unknown;

export interface Timers {
  setTimeout(callback: () => void, ms: number): TimerId;
  clearTimeout(id: TimerId): void;
}

/** The host's timers. */
export const systemTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (id) => clearTimeout(id as ReturnType<typeof setTimeout>),
};

/**
 * Resolves after `ms` on `timers`; rejects with the signal's reason when the
 * signal aborts first. The timer is cleared either way.
 */
export function sleep(timers: Timers, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      timers.clearTimeout(id);
      reject(signal!.reason);
    };
    const id = timers.setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

interface PendingTimer {
  id: number;
  due: number;
  callback: () => void;
}

/** Fake timers with their own clock: time moves only when the test says so. */
export interface ManualTimers extends Timers, Clock {
  /** Moves time forward by `ms`, firing every timer that falls due, in due order. */
  advance(ms: number): void;
  /** Jumps to the earliest pending timer and fires it; false when none is pending. */
  runNext(): boolean;
  /** How many timers are set and not yet fired or cleared. */
  pending(): number;
  /**
   * Lets `promise` run to completion: yields to the event loop so async work
   * can progress, and whenever everything is idle fires the next timer.
   * Rejects if nothing is pending and the promise still has not settled
   * after many idle turns (a hang that no timer will end).
   */
  settle<T>(promise: Promise<T>): Promise<T>;
}

const IDLE_TURNS = 4;
const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Fake timers for tests, starting at `startMs` on their own clock. */
export function manualTimers(startMs = 0): ManualTimers {
  let now = startMs;
  let nextId = 1;
  const timers = new Map<number, PendingTimer>();

  const earliest = (): PendingTimer | undefined => {
    let best: PendingTimer | undefined;
    for (const t of timers.values()) if (best === undefined || t.due < best.due || (t.due === best.due && t.id < best.id)) best = t;
    return best;
  };

  const fire = (t: PendingTimer): void => {
    timers.delete(t.id);
    if (t.due > now) now = t.due;
    t.callback();
  };

  const self: ManualTimers = {
    now: () => now,
    setTimeout(callback, ms) {
      const id = nextId++;
      timers.set(id, { id, due: now + Math.max(0, ms), callback });
      return id;
    },
    clearTimeout(id) {
      timers.delete(id as number);
    },
    advance(ms) {
      const target = now + ms;
      for (let t = earliest(); t !== undefined && t.due <= target; t = earliest()) fire(t);
      now = target;
    },
    runNext() {
      const t = earliest();
      if (t === undefined) return false;
      fire(t);
      return true;
    },
    pending: () => timers.size,
    async settle<T>(promise: Promise<T>): Promise<T> {
      let settled = false;
      const watched = promise.then(
        (v) => {
          settled = true;
          return v;
        },
        (e: unknown) => {
          settled = true;
          throw e;
        },
      );
      let idle = 0;
      while (!settled) {
        // Several turns of the event loop drain every promise chain that is
        // not waiting on a timer, so a timer fires only when the work is idle.
        for (let turn = 0; turn < IDLE_TURNS && !settled; turn++) await yieldToEventLoop();
        if (settled) break;
        if (self.runNext()) idle = 0;
        else if (++idle > 100) throw new Error("manualTimers.settle: the promise is still pending and no timer is set");
      }
      return watched;
    },
  };
  return self;
}
