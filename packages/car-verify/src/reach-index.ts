/**
 * The dependency graph as `reachBatch` reads it: every action renamed to its
 * topological position, so "earlier in the order" is "smaller number", with
 * predecessors and successors as CSR over positions and, per position, the
 * labels that rule a path out in O(1) packed next to each other (one cache
 * line per node the search touches, not one per array).
 *
 * If `u` reaches `v` (u ≠ v), then `u` has a lower position, a lower level, a
 * lower rank in the depth-first topological order and a greater height
 * (longest path down to a sink) than `v`. The breadth-first `graph.order` and
 * the depth-first order disagree on most pairs across independent branches;
 * levels and heights measure a path from both ends.
 */
import type { DependencyGraph } from "@car/ir";

/** Words per position in `labels`. */
export const LABEL_WORDS = 4;
/** Offsets into a position's `labels` words. */
export const LEVEL = 0;
export const RANK = 1;
export const HEIGHT = 2;
/** Scratch word for the searches: which search last reached this position, and from which end. */
export const STAMP = 3;

export interface ReachIndex {
  readonly predStart: Int32Array;
  readonly preds: Int32Array;
  readonly succStart: Int32Array;
  readonly succs: Int32Array;
  /** `LABEL_WORDS` words per position: level, depth-first rank, height, stamp. */
  readonly labels: Int32Array;
}

export function reachIndex(graph: DependencyGraph, pos: Int32Array): ReachIndex {
  const { predStart: declStart, preds: declPreds, order, level } = graph.flat;
  const n = order.length;
  const predStart = new Int32Array(n + 1);
  const preds = new Int32Array(declPreds.length);
  const succStart = new Int32Array(n + 1);
  for (let p = 0, k = 0; p < n; p++) {
    const i = order[p]!;
    const end = declStart[i + 1]!;
    for (let e = declStart[i]!; e < end; e++) {
      const q = pos[declPreds[e]!]!;
      preds[k++] = q;
      succStart[q + 1]!++;
    }
    predStart[p + 1] = k;
  }
  for (let p = 0; p < n; p++) succStart[p + 1]! += succStart[p]!;
  // Successors in ascending position: positions are visited in order.
  const succs = new Int32Array(preds.length);
  const fill = succStart.slice(0, n);
  for (let p = 0; p < n; p++) {
    const end = predStart[p + 1]!;
    for (let e = predStart[p]!; e < end; e++) succs[fill[preds[e]!]!++] = p;
  }

  const labels = new Int32Array(LABEL_WORDS * n);
  for (let p = 0; p < n; p++) labels[LABEL_WORDS * p + LEVEL] = level[order[p]!]!;
  depthFirstRanks(predStart, succStart, succs, labels);
  // Heights from the sinks up: a position's successors all come later.
  for (let p = n - 1; p >= 0; p--) {
    const up = labels[LABEL_WORDS * p + HEIGHT]! + 1;
    const end = predStart[p + 1]!;
    for (let e = predStart[p]!; e < end; e++) {
      const at = LABEL_WORDS * preds[e]! + HEIGHT;
      if (labels[at]! < up) labels[at] = up;
    }
  }
  return { predStart, preds, succStart, succs, labels };
}

/**
 * Ranks in a depth-first topological order: Kahn's algorithm with a stack
 * (sources pushed in ascending position, successors likewise), so it follows
 * one branch to its end before the next.
 */
function depthFirstRanks(predStart: Int32Array, succStart: Int32Array, succs: Int32Array, labels: Int32Array): void {
  const n = predStart.length - 1;
  const pending = new Int32Array(n);
  const stack = new Int32Array(n);
  let top = 0;
  for (let p = 0; p < n; p++) {
    pending[p] = predStart[p + 1]! - predStart[p]!;
    if (pending[p] === 0) stack[top++] = p;
  }
  for (let rank = 0; rank < n; rank++) {
    const p = stack[--top]!;
    labels[LABEL_WORDS * p + RANK] = rank;
    const end = succStart[p + 1]!;
    for (let e = succStart[p]!; e < end; e++) if (--pending[succs[e]!]! === 0) stack[top++] = succs[e]!;
  }
}
