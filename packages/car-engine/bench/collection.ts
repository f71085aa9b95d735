/**
 * How much of a run was garbage collection, read from V8's `gc` performance
 * entries. It separates the run's own work, which grows linearly with its
 * size, from collecting what the run keeps (its audit trail, its parsed
 * proposal): at 10k that fits in the young generation and is never copied,
 * at 100k every scavenge copies it.
 */
import { PerformanceObserver } from "node:perf_hooks";
import type { PerformanceEntry } from "node:perf_hooks";
import { gc } from "./measure.ts";

export interface Timed {
  /** Wall time of the run, ms. */
  ms: number;
  /** Of which in garbage collection (every kind, on the main thread), ms. */
  gcMs: number;
}

let observer: PerformanceObserver | undefined;
const delivered: PerformanceEntry[] = [];

/** Node queues `gc` entries from a callback after the collection: two turns of the loop deliver them. */
async function collected(): Promise<PerformanceEntry[]> {
  for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
  return [...delivered.splice(0), ...observer!.takeRecords()];
}

/** The fastest of `repeats` runs of `fn`, each after a full GC, with the collection time inside it. */
export async function timeWithGc(fn: () => Promise<unknown>, repeats: number): Promise<Timed> {
  if (observer === undefined) {
    observer = new PerformanceObserver((list) => delivered.push(...list.getEntries()));
    observer.observe({ entryTypes: ["gc"] });
  }
  let best: Timed = { ms: Infinity, gcMs: 0 };
  for (let r = 0; r < repeats; r++) {
    gc?.();
    await collected();
    const t0 = performance.now();
    await fn();
    const ms = performance.now() - t0;
    let gcMs = 0;
    for (const entry of await collected()) if (entry.startTime >= t0 && entry.startTime < t0 + ms) gcMs += entry.duration;
    if (ms < best.ms) best = { ms, gcMs };
  }
  return best;
}
