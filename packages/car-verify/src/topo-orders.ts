/**
 * Two topological orders of one DAG, as position arrays. If `u` reaches `v`
 * then `u` comes first in *every* topological order, so `v` before `u` in
 * either order proves there is no path (FELINE-style dominance). The second
 * order breaks ties the opposite way from the first — among ready actions it
 * takes the one latest in the first order — so the two disagree on as many
 * unordered pairs as possible.
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

/** Positions in a topological order that prefers, among ready actions, the latest in `pos`. */
export function oppositePositions(graph: DependencyGraph, pos: Int32Array): Int32Array {
  const n = graph.order.length;
  const pending = new Int32Array(n);
  for (let i = 0; i < n; i++) pending[i] = graph.preds[i]!.length;
  // A binary max-heap of action indices keyed by `pos`.
  const heap = new Int32Array(n);
  let size = 0;
  const push = (x: number) => {
    let i = size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (pos[heap[parent]!]! >= pos[x]!) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = x;
  };
  const pop = (): number => {
    const top = heap[0]!;
    const last = heap[--size]!;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= size) break;
      if (child + 1 < size && pos[heap[child + 1]!]! > pos[heap[child]!]!) child++;
      if (pos[heap[child]!]! <= pos[last]!) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = last;
    return top;
  };
  for (let i = 0; i < n; i++) if (pending[i] === 0) push(i);
  const out = new Int32Array(n);
  for (let p = 0; p < n; p++) {
    const node = pop();
    out[node] = p;
    for (const s of graph.succs[node]!) if (--pending[s]! === 0) push(s);
  }
  return out;
}
