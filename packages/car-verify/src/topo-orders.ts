/**
 * Topological positions: `graph.order` inverted. If `u` reaches `v` then `u`
 * comes first in every topological order, so positions answer "no path" for
 * half of all pairs and bound the slices the reachability stages work on.
 */
import type { DependencyGraph } from "@car/ir";

/** `graph.order` inverted: the position of every action index. */
export function topoPositions(graph: DependencyGraph): Int32Array {
  const order = graph.flat.order;
  const pos = new Int32Array(order.length);
  for (let p = 0; p < order.length; p++) pos[order[p]!] = p;
  return pos;
}
