/**
 * Time and identity are injected wherever they appear (ids, timestamps,
 * timeouts, backoff) so every test is deterministic.
 */
import { randomUUID } from "node:crypto";

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export interface IdGenerator {
  /** A fresh, unique id. */
  next(): string;
}

export const systemClock: Clock = { now: () => Date.now() };

const randomNext = (): string => randomUUID();

/** UUIDv4-based ids. */
export const randomIds: IdGenerator = { next: randomNext };

/** 12 lowercase hex characters from a UUIDv4: the spec's proposal id form. */
export function shortId(ids: IdGenerator = randomIds): string {
  // A UUID's first 12 hex digits are its first two groups (8 + 4): no regex over the whole id on every run.
  if (ids.next === randomNext) {
    const uuid = randomUUID();
    return uuid.slice(0, 8) + uuid.slice(9, 13);
  }
  return ids.next().replace(/-/g, "").slice(0, 12);
}

/** Deterministic ids for tests: `prefix1`, `prefix2`, … */
export function sequentialIds(prefix = "id"): IdGenerator {
  let n = 0;
  return { next: () => `${prefix}${++n}` };
}

/** A clock that only moves when told to. */
export function manualClock(startMs = 0): Clock & { advance(ms: number): void; set(ms: number): void } {
  let t = startMs;
  return {
    now: () => t,
    advance(ms: number) {
      t += ms;
    },
    set(ms: number) {
      t = ms;
    },
  };
}

/** The last millisecond `rfc3339` wrote, and its text: a busy runtime stamps many events within one. */
let lastMs = Number.NaN;
let lastText = "";

/** RFC 3339 in UTC, as the wire format writes timestamps. */
export function rfc3339(ms: number): string {
  // Only a number is remembered: anything else (a `Date` from JavaScript, which can change) is written afresh.
  if (typeof ms !== "number") return new Date(ms).toISOString();
  if (ms !== lastMs) {
    // Throws `RangeError` for a time `Date` cannot hold, before anything is kept.
    lastText = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastText;
}
