/** Random DAGs and a plain graph search to check reachability answers against, for the tests. */
import { dependencyEdges, toolCall } from "@car/ir";

/**
 * A random DAG of `n` tool calls, each depending on up to three earlier ones;
 * `reversed` declares them last first, so every dependency is declared later
 * (the index then numbers by topological position, not declaration order).
 */
export function randomGraph(n: number, seed: number, reversed = false) {
  let s = seed >>> 0;
  const rand = (m: number) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s % m;
  };
  const actions = Array.from({ length: n }, (_, i) => {
    const deps = i === 0 ? [] : [...new Set(Array.from({ length: rand(4) }, () => `a${rand(i)}`))];
    return toolCall("t", {}, { id: `a${i}`, dependencies: deps });
  });
  return { graph: dependencyEdges(reversed ? actions.reverse() : actions), rand };
}

/** Whether a dependency path leads from `from` to `to`, by a plain depth-first search over `succs`. */
export function naiveReaches(succs: readonly (readonly number[])[], from: number, to: number): boolean {
  const seen = new Uint8Array(succs.length);
  const stack = [from];
  while (stack.length > 0) {
    for (const s of succs[stack.pop()!]!) {
      if (s === to) return true;
      if (seen[s] === 0) {
        seen[s] = 1;
        stack.push(s);
      }
    }
  }
  return false;
}
