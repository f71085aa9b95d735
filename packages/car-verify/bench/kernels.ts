/**
 * Each native kernel against its TypeScript reference, on the random-DAG
 * shape, marshalling included — the path a caller takes:
 * - levels: `DependencyGraph.flat` (CSR predecessors, built by
 *   `dependencyEdges`) to order and levels: `levelsFromPreds` vs the kernel,
 *   outputs allocated in the timed call. The `dependencyEdges` row is the
 *   whole function (string ids resolved in TS on both paths), for context.
 * - reach: `reachBatch` whole on the write-conflict pairs verify asks about;
 *   native copies the queries into Int32Arrays and runs filters and sweep.
 * - group: the bucketing of interned key ids (`bucketByKey` vs the kernel,
 *   the ids copied into an Int32Array for it); the `groupByKey` row adds the
 *   interning of the key strings, which stays in TS on both paths (the
 *   order is `DependencyGraph.flat.order` on both).
 * Each cell is the fastest of several runs' wall time (CPU time counts the
 * collector's helper threads too).
 */
import { loadavg } from "node:os";
import { dependencyEdges, levelsFromPreds, parseProposal, pushWrittenKeys } from "@car/ir";
import { nativeKernels, setNativeMode } from "@car/native";
import { bucketByKey, groupByKey, internKeys, KeyTable, membersOf } from "../src/key-groups.ts";
import { emptyPairs, pairsWithin } from "../src/pairs.ts";
import { reachBatch } from "../src/reach.ts";
import { topoPositions } from "../src/topo-orders.ts";
import { randomProposalJson } from "./generate.ts";
import { time } from "./timing.ts";

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
  const same = (what: string, a: ArrayLike<number>, b: ArrayLike<number>) => {
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) throw new Error(`${what}: native and TS differ at ${i}`);
  };
  for (const n of sizes) {
    const runs = n >= 1_000_000 ? 3 : 7;
    const actions = parseProposal(randomProposalJson(n)).actions;

    const whole = (mode: "off" | "always") => {
      setNativeMode(mode);
      const t = time(runs, () => dependencyEdges(actions));
      setNativeMode("auto");
      return t;
    };
    const edgesTs = whole("off");
    const edgesNative = whole("always");
    same("dependencyEdges order", edgesTs.value.order, edgesNative.value.order);
    const graph = edgesTs.value;
    const { predStart, preds } = graph.flat;
    const levelsTs = time(runs, () => {
      const order = new Int32Array(n);
      const level = new Int32Array(n);
      levelsFromPreds(predStart, preds, order, level);
      return level;
    });
    const levelsNative = time(runs, () => {
      const order = new Int32Array(n);
      const level = new Int32Array(n);
      native.levels(predStart, preds, order, level);
      return level;
    });
    same("levels", levelsTs.value, levelsNative.value);
    line("levels", n, levelsTs.wall, levelsNative.wall, true);
    line("dependencyEdges", n, edgesTs.wall, edgesNative.wall, false);

    const pos = topoPositions(graph);
    const writers = groupByKey(n, (i, out) => pushWrittenKeys(actions[i]!, out), graph.order);
    const pairs = emptyPairs();
    for (let k = 0; k < writers.table.keys.length; k++) if (membersOf(writers, k).length > 1) pairsWithin(membersOf(writers, k), pairs);
    const from: number[] = [];
    const to: number[] = [];
    pairs.a.forEach((x, k) => {
      const y = pairs.b[k]!;
      from.push(pos[x]! <= pos[y]! ? x : y);
      to.push(pos[x]! <= pos[y]! ? y : x);
    });
    setNativeMode("off");
    const reachTs = time(runs, () => reachBatch(graph, pos, from, to));
    setNativeMode("always");
    const reachNative = time(runs, () => reachBatch(graph, pos, from, to));
    setNativeMode("auto");
    same("reach", reachTs.value, reachNative.value);
    line(`reach (${from.length} q)`, n, reachTs.wall, reachNative.wall, true);

    const writes = (i: number, out: string[]) => pushWrittenKeys(actions[i]!, out);
    const table = new KeyTable();
    const { at, ids } = internKeys(n, writes, table);
    const keyCount = table.keys.length;
    const groupTs = time(runs, () => bucketByKey(graph.flat.order, at, ids, keyCount));
    const groupNative = time(runs, () => {
      const start = new Int32Array(keyCount + 1);
      const members = new Int32Array(ids.length);
      native.group(graph.flat.order, at, Int32Array.from(ids), start, members);
      return { start, members };
    });
    same("group", groupTs.value.members, groupNative.value.members);
    line("group", n, groupTs.wall, groupNative.wall, true);
    setNativeMode("off");
    const groupWholeTs = time(runs, () => groupByKey(n, writes, graph.flat.order));
    setNativeMode("always");
    const groupWholeNative = time(runs, () => groupByKey(n, writes, graph.flat.order));
    setNativeMode("auto");
    line("groupByKey", n, groupWholeTs.wall, groupWholeNative.wall, false);
  }
}
