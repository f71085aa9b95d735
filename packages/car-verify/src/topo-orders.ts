/**
 * Two topological orders of one DAG, as position arrays. If `u` reaches `v`
 * then `u` comes first in *every* topological order, so `v` before `u` in
 * either order proves there is no path (FELINE-style dominance). The second
 * order is depth-first where the first is breadth-first, so the two disagree
 * on many unordered pairs — every pair across independent branches.
 */
import type { DependencyGraph } from "@car/ir";

/** `graph.order` inverted: the position of every action index. */
export function topoPositions(graph: DependencyGraph): Int32Array {
  const pos = new Int32Array(graph.order.length);
  graph.order.forEach((node, p) => {
    pos[node] = p;
  });
  return pos;
}

/**
 * Positions in a depth-first topological order: Kahn's algorithm with a stack
 * instead of `graph.order`'s queue, so it follows one branch to its end before
 * the next, where the first order sweeps across branches level by level.
 */
export function oppositePositions(graph: DependencyGraph): Int32Array {
  const n = graph.order.length;
  const pending = new Int32Array(n);
  const stack = new Int32Array(n);
  let top = 0;
  for (let i = 0; i < n; i++) {
    pending[i] = graph.preds[i]!.length;
    if (pending[i] === 0) stack[top++] = i;
  }
  const out = new Int32Array(n);
  for (let p = 0; p < n; p++) {
    const node = stack[--top]!;
    out[node] = p;
    for (const s of graph.succs[node]!) if (--pending[s]! === 0) stack[top++] = s;
  }
  return out;
}
