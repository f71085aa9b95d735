/**
 * Write conflicts: two actions writing the same key with no dependency path
 * between them, so the key's final value depends on scheduling. Grouped by
 * key; reachability is batched (see `reach.ts`).
 */
import type { DependencyGraph } from "@car/ir";
import { emptyPairs, pairsWithin, unorderedPairs } from "./pairs.ts";

export interface WriteConflicts {
  /** `[earlier-declared, later-declared, key]` as action indices, sorted. */
  readonly pairs: [number, number, string][];
  /**
   * Keys whose writers were too many for every pair to be checked and which
   * do have a conflict, so the listed pairs may not be all of them. (When
   * every neighbouring pair is ordered, all pairs are, and the check is complete.)
   */
  readonly partialKeys: string[];
}

/** `writers`: action indices per key, each list in topological order. */
export function findWriteConflicts(graph: DependencyGraph, pos: Int32Array, writers: ReadonlyMap<string, readonly number[]>): WriteConflicts {
  const candidates = emptyPairs();
  const keys: string[] = [];
  const busyKeys = new Set<string>();
  for (const [key, members] of writers) {
    if (members.length < 2) continue;
    const before = candidates.a.length;
    if (!pairsWithin(members, candidates)) busyKeys.add(key);
    for (let k = before; k < candidates.a.length; k++) keys.push(key);
  }
  const unordered = unorderedPairs(graph, pos, candidates);
  const pairs: [number, number, string][] = [];
  const partialKeys = new Set<string>();
  for (let k = 0; k < unordered.length; k++) {
    if (unordered[k] !== 1) continue;
    const x = candidates.a[k]!;
    const y = candidates.b[k]!;
    if (busyKeys.has(keys[k]!)) partialKeys.add(keys[k]!);
    pairs.push(x < y ? [x, y, keys[k]!] : [y, x, keys[k]!]);
  }
  pairs.sort((p, q) => p[1] - q[1] || p[0] - q[0] || (p[2] < q[2] ? -1 : p[2] > q[2] ? 1 : 0));
  return { pairs, partialKeys: [...partialKeys] };
}
