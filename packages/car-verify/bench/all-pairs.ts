/**
 * The reference the benchmark measures verify's conflict check against:
 * every pair of actions, write sets intersected, and a graph search for each
 * pair that shares a key. Correct, and quadratic — what the batched,
 * key-grouped check avoids.
 */
import type { ActionProposal } from "@car/ir";
import { dependencyEdges, effectiveWriteSet } from "@car/ir";

export function allPairsConflicts(proposal: ActionProposal): number {
  const graph = dependencyEdges(proposal.actions);
  const writes = proposal.actions.map(effectiveWriteSet);
  const n = writes.length;
  const reaches = (from: number, to: number): boolean => {
    const seen = new Uint8Array(n);
    const stack = [from];
    while (stack.length > 0) {
      for (const s of graph.succs[stack.pop()!]!) {
        if (s === to) return true;
        if (seen[s] === 0) {
          seen[s] = 1;
          stack.push(s);
        }
      }
    }
    return false;
  };
  let conflicts = 0;
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const shared = writes[i]!.filter((k) => writes[j]!.includes(k));
      if (shared.length === 0 || reaches(i, j) || reaches(j, i)) continue;
      conflicts += shared.length;
    }
  }
  return conflicts;
}
