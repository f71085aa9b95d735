/**
 * Topological positions: `graph.order` inverted. If `u` reaches `v` then `u`
 * comes first in every topological order, so positions answer "no path" for
 * half of all pairs and bound the slices the reachability stages work on.
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
