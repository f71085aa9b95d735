/**
 * Write conflicts: two actions writing the same key with no dependency path
 * between them, so the key's final value depends on scheduling. Grouped by
 * key; reachability is batched (see `reach.ts`). The result is sorted with
 * counting sorts over action indices, not a comparator sort of pair objects:
 * a conflict-heavy plan has as many pairs as actions.
 */
import type { DependencyGraph } from "@car/ir";
import { groupSize, type KeyGroups, membersOf } from "./key-groups.ts";
import { pairsWithin, unorderedPairs } from "./pairs.ts";
import { Reachability } from "./reach.ts";

export interface WriteConflicts {
  /**
   * Pair `k` is actions `earlier[k] < later[k]` (declaration indices) both
   * writing key id `key[k]`; sorted by `later`, then `earlier`, then key.
   */
  readonly earlier: Int32Array;
  readonly later: Int32Array;
  readonly key: Int32Array;
  /**
   * Key ids whose writers were too many for every pair to be checked and
   * which do have a conflict, so the listed pairs may not be all of them.
   * (When every neighbouring pair is ordered, all pairs are, and the check is complete.)
   */
  readonly partialKeys: number[];
}

/** A stable counting sort of `items` by `by[item]`, each value in `[0, range)`. */
function countingSort(items: Int32Array, by: Int32Array, range: number): Int32Array {
  const start = new Int32Array(range + 1);
  for (let k = 0; k < items.length; k++) start[by[items[k]!]! + 1]!++;
  for (let v = 0; v < range; v++) start[v + 1]! += start[v]!;
  const out = new Int32Array(items.length);
  for (let k = 0; k < items.length; k++) out[start[by[items[k]!]!]!++] = items[k]!;
  return out;
}

/** `writers`: the actions writing each key, each run in topological order. */
export function findWriteConflicts(graph: DependencyGraph, pos: Int32Array, writers: KeyGroups): WriteConflicts {
  const keys = writers.table.keys;
  // Keys in string order, so pairs equal in both actions come out ordered by key.
  const shared: number[] = [];
  for (let k = 0; k < writers.start.length - 1; k++) if (groupSize(writers, k) > 1) shared.push(k);
  shared.sort((x, y) => (keys[x]! < keys[y]! ? -1 : keys[x]! > keys[y]! ? 1 : 0));

  // Candidate pair c is (xs[c], ys[c]) on key keyOf[c].
  const xs: number[] = [];
  const ys: number[] = [];
  const keyOf: number[] = [];
  const busy = new Set<number>();
  for (const k of shared) {
    const all = pairsWithin(membersOf(writers, k), (x, y) => {
      xs.push(x);
      ys.push(y);
      keyOf.push(k);
    });
    if (!all) busy.add(k);
  }
  const unordered = unorderedPairs(new Reachability(graph, pos), xs, ys);
  let count = 0;
  for (let c = 0; c < unordered.length; c++) count += unordered[c]!;
  const earlier = new Int32Array(xs.length);
  const later = new Int32Array(xs.length);
  let found: Int32Array = new Int32Array(count);
  const partial = new Set<number>();
  for (let c = 0, f = 0; c < unordered.length; c++) {
    const x = xs[c]!;
    const y = ys[c]!;
    earlier[c] = Math.min(x, y);
    later[c] = Math.max(x, y);
    if (unordered[c] !== 1) continue;
    found[f++] = c;
    if (busy.has(keyOf[c]!)) partial.add(keyOf[c]!);
  }
  // Candidates are in key order; sorting stably by earlier, then by later, gives (later, earlier, key).
  const n = graph.level.length;
  found = countingSort(countingSort(found, earlier, n), later, n);
  const out = { earlier: new Int32Array(count), later: new Int32Array(count), key: new Int32Array(count) };
  for (let f = 0; f < count; f++) {
    const c = found[f]!;
    out.earlier[f] = earlier[c]!;
    out.later[f] = later[c]!;
    out.key[f] = keyOf[c]!;
  }
  return { ...out, partialKeys: [...partial] };
}
