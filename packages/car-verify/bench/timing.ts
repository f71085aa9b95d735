/**
 * Timing and heap measurement for the benches: each timing is the fastest of
 * several runs, each after a full garbage collection, as wall time and as
 * this process's CPU time (on a shared machine the CPU time is the steadier).
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

setFlagsFromString("--expose-gc");
export const collectGarbage = runInNewContext("gc") as () => void;

export interface Timing {
  wall: number;
  cpu: number;
}

export function time<T>(runs: number, f: () => T): Timing & { value: T } {
  let value: T | undefined;
  let wall = Infinity;
  let cpu = Infinity;
  for (let r = 0; r < runs; r++) {
    value = undefined; // the previous result is garbage before the next run
    collectGarbage();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    value = f();
    wall = Math.min(wall, performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu = Math.min(cpu, (c.user + c.system) / 1000);
  }
  return { wall, cpu, value: value as T };
}

/**
 * Heap growth of one run of `f` above what is live before it, per `n`:
 * `after` counts everything allocated and not yet collected when `f` returns
 * (an upper bound on what `f` keeps, not a true peak: collections during the
 * run can hide one), `retained` what its result keeps alive after a full GC.
 */
export function heapPer(n: number, f: () => unknown): { after: number; retained: number } {
  collectGarbage();
  const before = process.memoryUsage().heapUsed;
  const value = f();
  const after = process.memoryUsage().heapUsed;
  collectGarbage();
  const retained = process.memoryUsage().heapUsed;
  // Read after the collection, so `retained` counts what the result keeps; not returned, so it
  // never sits under the row's later measurements.
  void value;
  return { after: (after - before) / n, retained: (retained - before) / n };
}
