/**
 * Each native kernel against its TypeScript reference, on the random-DAG
 * shape, marshalling included — the path a caller takes:
 * - levels: `DependencyGraph.flat` (CSR predecessors, built by
 *   `dependencyEdges`) to order and levels: `levelsFromPreds` vs the kernel,
 *   outputs allocated in the timed call. The `dependencyEdges` row is the
 *   whole function (string ids resolved in TS on both paths), for context.
 * - reach: `reachBatch` whole on the write-conflict pairs verify asks about;
 *   native copies the queries into Int32Arrays and runs labels, search and sweep.
 * - group: the bucketing of interned key ids (`bucketByKey` vs the kernel,
 *   both on `internKeys`' Int32Arrays); the `groupByKey` row adds the
 *   interning of the key strings, which stays in TS on both paths (the
 *   order is `DependencyGraph.flat.order` on both).
 * Each cell is the fastest of several runs' CPU time, the two paths run
 * alternately so both see the same load; `bench:kernels` runs node with
 * `--single-threaded-gc`, so the collector's helper threads do not count.
 */
import { loadavg } from "node:os";
import { dependencyEdges, parseProposal } from "@car/ir";
import { levelsFromPreds, pushWrittenKeys } from "@car/ir/internal";
import { nativeKernels, setNativeMode } from "@car/native";
import { bucketByKey, groupByKey, internKeys, KeyTable, membersOf } from "../src/key-groups.ts";
import { pairsWithin } from "../src/pairs.ts";
import { reachBatch } from "../src/reach.ts";
import { topoPositions } from "../src/topo-orders.ts";
import { randomProposalJson } from "./generate.ts";
import { time } from "./timing.ts";

/** `BENCH_KERNEL=levels,group` picks kernels (reach at 1M takes minutes on the TS path). */
const picked = (name: string) => process.env["BENCH_KERNEL"]?.split(",").includes(name) ?? true;

export function runKernelBench(sizes: readonly number[]): void {
  setNativeMode("always");
  const native = nativeKernels();
  setNativeMode("auto");
  if (native === undefined) {
    console.log("  (@car/native not loaded: build it with `pnpm --filter @car/native build:native`)");
    return;
  }
  const line = (name: string, n: number, ts: number, nat: number, goal: boolean) =>
    console.log(
      `  ${name.padEnd(16)} n=${String(n).padStart(8)}  TS ${ts.toFixed(1).padStart(8)} ms  native ${nat.toFixed(1).padStart(8)} ms  = ${(ts / nat).toFixed(2).padStart(5)}x${goal ? (ts / nat >= 3 ? "  >= 3x   " : "  below 3x") : "  (context)"}  load ${loadavg()[0]!.toFixed(1)}`,
    );
  /** Fastest CPU time of `runs` alternating runs of each path; values from the last run. */
  const pair = <T, U>(runs: number, ts: () => T, nat: () => U) => {
    const a = { cpu: Infinity, value: undefined as T | undefined };
    const b = { cpu: Infinity, value: undefined as U | undefined };
    for (let r = 0; r < runs; r++) {
      setNativeMode("off");
      const x = time(1, ts);
      setNativeMode("always");
      const y = time(1, nat);
      setNativeMode("auto");
      [a.cpu, a.value, b.cpu, b.value] = [Math.min(a.cpu, x.cpu), x.value, Math.min(b.cpu, y.cpu), y.value];
    }
    return { ts: a as { cpu: number; value: T }, native: b as { cpu: number; value: U } };
  };
  const same = (what: string, a: ArrayLike<number>, b: ArrayLike<number>) => {
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) throw new Error(`${what}: native and TS differ at ${i}`);
  };
  for (const n of sizes) {
    const runs = n >= 1_000_000 ? 3 : 11;
    // The long TS runs at 1M (dependencyEdges, reachBatch: seconds each) are timed once.
    const longRuns = n >= 1_000_000 ? 1 : runs;
    const actions = parseProposal(randomProposalJson(n)).actions;

    const graph = dependencyEdges(actions);
    const { predStart, preds } = graph.flat;
    if (picked("levels")) {
      const edges = pair(
        longRuns,
        () => dependencyEdges(actions),
        () => dependencyEdges(actions),
      );
      same("dependencyEdges order", edges.ts.value.order, edges.native.value.order);
      const levels = pair(
        runs,
        () => {
          const [order, level] = [new Int32Array(n), new Int32Array(n)];
          levelsFromPreds(predStart, preds, order, level);
          return level;
        },
        () => {
          const [order, level] = [new Int32Array(n), new Int32Array(n)];
          native.levels(predStart, preds, order, level);
          return level;
        },
      );
      same("levels", levels.ts.value, levels.native.value);
      line("levels", n, levels.ts.cpu, levels.native.cpu, true);
      line("dependencyEdges", n, edges.ts.cpu, edges.native.cpu, false);
    }

    if (picked("reach")) {
      const pos = topoPositions(graph);
      const writers = groupByKey(n, (i, out) => pushWrittenKeys(actions[i]!, out), graph.order);
      const from: number[] = [];
      const to: number[] = [];
      const query = (x: number, y: number) => {
        from.push(pos[x]! <= pos[y]! ? x : y);
        to.push(pos[x]! <= pos[y]! ? y : x);
      };
      for (let k = 0; k < writers.table.keys.length; k++) if (membersOf(writers, k).length > 1) pairsWithin(membersOf(writers, k), query);
      const reachRun = () => reachBatch(graph, pos, from, to);
      const reach = pair(longRuns, reachRun, reachRun);
      same("reach", reach.ts.value, reach.native.value);
      line(`reach (${from.length} q)`, n, reach.ts.cpu, reach.native.cpu, true);
    }

    if (picked("group")) {
      const writes = (i: number, out: string[]) => pushWrittenKeys(actions[i]!, out);
      const table = new KeyTable();
      const { at, ids } = internKeys(n, writes, table);
      const keyCount = table.keys.length;
      const group = pair(
        runs,
        () => bucketByKey(graph.flat.order, at, ids, keyCount),
        () => {
          const start = new Int32Array(keyCount + 1);
          const members = new Int32Array(ids.length);
          native.group(graph.flat.order, at, ids, start, members);
          return { start, members };
        },
      );
      same("group", group.ts.value.members, group.native.value.members);
      line("group", n, group.ts.cpu, group.native.cpu, true);
      const groupRun = () => groupByKey(n, writes, graph.flat.order);
      const grouped = pair(longRuns, groupRun, groupRun);
      line("groupByKey", n, grouped.ts.cpu, grouped.native.cpu, false);
    }
  }
}
