/**
 * "Must action `j` finish before action `i` starts?" — the question every
 * `$<id>.output` reference asks (DECISIONS.md §2), answered without a graph
 * search for the shapes plans take. A reference to the output of an action
 * far back in a deep chain used to be one backwards search per reference, so
 * a 100k-action chain whose actions all read the first one's output did
 * ~5·10⁹ steps.
 *
 * Three labels, built once in O(actions + edges):
 * - levels rule out "no" at once: an ancestor sits on a strictly lower level;
 * - a spanning tree (each action under its deepest predecessor) numbered in
 *   depth-first pre/post order: an ancestor in the tree is an ancestor in the
 *   DAG, so every reference along a chain or a tree is a "yes" in O(1);
 * - only what neither settles is searched, backwards from `i`, pruned by
 *   level and stopped by the first node whose tree interval holds `j`.
 */
import type { DependencyGraph } from "./dag.ts";

export class Ancestry {
  readonly #graph: DependencyGraph;
  readonly #enter: Int32Array;
  readonly #exit: Int32Array;
  /** `mark[p] === stamp`: p already visited by the current search (no Set per query). */
  readonly #mark: Int32Array;
  #stamp = 0;

  constructor(graph: DependencyGraph) {
    this.#graph = graph;
    const n = graph.level.length;
    const parent = new Int32Array(n).fill(-1);
    const childCount = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) {
      let best = -1;
      for (const p of graph.preds[i]!) if (best === -1 || graph.level[p]! > graph.level[best]!) best = p;
      parent[i] = best;
      if (best !== -1) childCount[best + 1]!++;
    }
    // Children as one flat array (CSR), in declaration order.
    const start = childCount;
    for (let i = 0; i < n; i++) start[i + 1]! += start[i]!;
    const children = new Int32Array(start[n]!);
    const fill = start.slice(0, n);
    for (let i = 0; i < n; i++) if (parent[i] !== -1) children[fill[parent[i]!]!++] = i;

    this.#enter = new Int32Array(n);
    this.#exit = new Int32Array(n);
    const stack = new Int32Array(n);
    const next = new Int32Array(n); // the next child of stack entry to visit
    let clock = 0;
    for (let root = 0; root < n; root++) {
      if (parent[root] !== -1) continue;
      let top = 0;
      stack[top++] = root;
      this.#enter[root] = clock++;
      next[root] = start[root]!;
      while (top > 0) {
        const node = stack[top - 1]!;
        if (next[node]! < start[node + 1]!) {
          const child = children[next[node]!++]!;
          this.#enter[child] = clock++;
          next[child] = start[child]!;
          stack[top++] = child;
        } else {
          this.#exit[node] = clock++;
          top--;
        }
      }
    }
    this.#mark = new Int32Array(n);
  }

  /** Whether `ancestor` is `of` or above it in the spanning tree. */
  #treeAncestor(ancestor: number, of: number): boolean {
    return this.#enter[ancestor]! <= this.#enter[of]! && this.#exit[of]! <= this.#exit[ancestor]!;
  }

  /** Whether a dependency path leads from `ancestor` to `of` (an action is not its own ancestor). */
  has(ancestor: number, of: number): boolean {
    const { level, preds } = this.#graph;
    const target = level[ancestor]!;
    if (target >= level[of]!) return false;
    if (this.#treeAncestor(ancestor, of)) return true;
    const mark = this.#mark;
    const stamp = ++this.#stamp;
    const stack = [of];
    while (stack.length > 0) {
      const node = stack.pop()!;
      for (const p of preds[node]!) {
        if (p === ancestor) return true;
        // An action at or below the target's level cannot have it as an ancestor.
        if (mark[p] === stamp || level[p]! <= target) continue;
        if (this.#treeAncestor(ancestor, p)) return true;
        mark[p] = stamp;
        stack.push(p);
      }
    }
    return false;
  }
}
