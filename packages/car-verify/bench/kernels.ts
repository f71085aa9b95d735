/**
 * Each native kernel against the TypeScript path it would replace, on the
 * random-DAG shape, marshalling included (flattening to typed arrays,
 * interning keys): the path a caller would take.
 * - levels: `dependencyEdges` whole (edge collection is shared TS work).
 * - reach: `reachBatch` on the write-conflict candidate pairs verify asks about.
 * - group: writers grouped by key; native = intern keys + CSR + kernel,
 *   TS = `groupByKey` (interned keys, CSR filled in topological order).
 */
import type { Action } from "@car/ir";
import { dependencyEdges, effectiveWriteSet, parseProposal, pushWrittenKeys } from "@car/ir";
import { nativeKernels, setNativeMode } from "@car/native";
import { groupByKey, membersOf } from "../src/key-groups.ts";
import { emptyPairs, pairsWithin } from "../src/pairs.ts";
import { reachBatch } from "../src/reach.ts";
import { topoPositions } from "../src/topo-orders.ts";
import { randomProposalJson } from "./generate.ts";
import { time } from "./timing.ts";

function internedGroups(actions: readonly Action[], writeSets: readonly string[][], order: readonly number[]) {
  const native = nativeKernels()!;
  const ids = new Map<string, number>();
  const keyStart = new Int32Array(actions.length + 1);
  let total = 0;
  for (let i = 0; i < actions.length; i++) total += writeSets[i]!.length;
  const keyIds = new Int32Array(total);
  for (let i = 0, k = 0; i < actions.length; i++) {
    for (const key of writeSets[i]!) {
      let id = ids.get(key);
      if (id === undefined) ids.set(key, (id = ids.size));
      keyIds[k++] = id;
    }
    keyStart[i + 1] = k;
  }
  const groupStart = new Int32Array(ids.size + 1);
  const members = new Int32Array(total);
  native.group(Int32Array.from(order), keyStart, keyIds, groupStart, members);
  return { groupStart, members };
}

export function runKernelBench(sizes: readonly number[]): void {
  setNativeMode("always");
  const loaded = nativeKernels() !== undefined;
  setNativeMode("auto");
  if (!loaded) {
    console.log("  (@car/native not loaded: build it with `pnpm --filter @car/native build:native`)");
    return;
  }
  const line = (name: string, n: number, ts: number, native: number) =>
    console.log(
      `  ${name.padEnd(7)} n=${String(n).padStart(8)}  TS ${ts.toFixed(1).padStart(8)} ms  native ${native.toFixed(1).padStart(8)} ms  = ${(ts / native).toFixed(2)}x ${ts / native >= 3 ? "OK" : "below 3x"}`,
    );
  const both = <T>(runs: number, f: () => T) => {
    setNativeMode("off");
    const ts = time(runs, f);
    setNativeMode("always");
    const native = time(runs, f);
    setNativeMode("auto");
    return { ts: ts.cpu, native: native.cpu, tsValue: ts.value, nativeValue: native.value };
  };
  for (const n of sizes) {
    const runs = n >= 1_000_000 ? 1 : 3;
    const proposal = parseProposal(randomProposalJson(n));
    const actions = proposal.actions;
    const levels = both(runs, () => dependencyEdges(actions));
    line("levels", n, levels.ts, levels.native);

    const graph = levels.tsValue;
    const pos = topoPositions(graph);
    const writeSets = actions.map(effectiveWriteSet);
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
    const reach = both(runs, () => reachBatch(graph, pos, from, to));
    if (reach.tsValue.some((v, k) => v !== reach.nativeValue[k])) throw new Error("reach: native and TS answers differ");
    line("reach", n, reach.ts, reach.native);

    const ts = time(runs, () => groupByKey(n, (i, out) => pushWrittenKeys(actions[i]!, out), graph.order));
    const native = time(runs, () => internedGroups(actions, writeSets, graph.order));
    line("group", n, ts.cpu, native.cpu);
  }
}
