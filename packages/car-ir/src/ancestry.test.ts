import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Ancestry } from "./ancestry.ts";
import { dependencyEdges, newAction, parseProposal, type DependencyGraph } from "./index.ts";
import { carErrorOf } from "../test/car-error.ts";

/** Reachability by plain search: the reference the labels must agree with. */
function reaches(graph: DependencyGraph, from: number, to: number): boolean {
  const seen = new Set<number>();
  const stack = [...graph.preds[to]!];
  while (stack.length > 0) {
    const p = stack.pop()!;
    if (p === from) return true;
    if (seen.has(p)) continue;
    seen.add(p);
    stack.push(...graph.preds[p]!);
  }
  return false;
}

/** A random DAG: edges only from lower to higher rank, declared in a shuffled order. */
const randomDag = fc
  .integer({ min: 1, max: 30 })
  .chain((n) =>
    fc.tuple(fc.shuffledSubarray([...Array(n).keys()], { minLength: n, maxLength: n }), fc.array(fc.tuple(fc.nat(n - 1), fc.nat(n - 1)), { maxLength: n * 3 })),
  )
  .map(([order, pairs]) => {
    const deps: string[][] = order.map(() => []);
    for (const [x, y] of pairs) if (x !== y) deps[Math.max(x, y)]!.push(`r${Math.min(x, y)}`);
    return dependencyEdges(order.map((rank) => newAction("assertion", { id: `r${rank}`, dependencies: deps[rank]! })));
  });

describe("Ancestry", () => {
  it("answers exactly what a graph search answers, for every pair", () => {
    fc.assert(
      fc.property(randomDag, (graph) => {
        const ancestry = new Ancestry(graph);
        const n = graph.ids.length;
        for (let j = 0; j < n; j++) for (let i = 0; i < n; i++) expect(ancestry.has(j, i)).toBe(reaches(graph, j, i));
      }),
      { numRuns: 300 },
    );
  });

  it("answers along a long chain both ways without overflowing or searching it", () => {
    const n = 20_000;
    const actions = Array.from({ length: n }, (_, i) => newAction("assertion", { id: `a${i}`, dependencies: i === 0 ? [] : [`a${i - 1}`] }));
    const ancestry = new Ancestry(dependencyEdges(actions));
    expect(ancestry.has(0, n - 1)).toBe(true);
    expect(ancestry.has(n - 1, 0)).toBe(false);
    expect(ancestry.has(7, 7)).toBe(false);
  });
});

describe("far-back $<id>.output references in the parser", () => {
  it("accepts every action of a deep chain reading the first action's output", () => {
    const n = 20_000;
    const actions = Array.from({ length: n }, (_, i) => ({
      id: `a${i}`,
      type: "tool_call",
      tool: "t",
      parameters: i === 0 ? {} : { first: "$a0.output", half: `$a${i >> 1}.output.v` },
      dependencies: i === 0 ? [] : [`a${i - 1}`],
    }));
    expect(parseProposal({ actions }).actions).toHaveLength(n);
  });

  it("still rejects a far reference across two independent chains", () => {
    const chain = (name: string) =>
      Array.from({ length: 200 }, (_, i) => ({ id: `${name}${i}`, type: "tool_call", tool: "t", dependencies: i === 0 ? [] : [`${name}${i - 1}`] }));
    const left = chain("l");
    const right = chain("r");
    (right[199] as { parameters?: object }).parameters = { x: "$l0.output", y: "$r0.output" };
    const error = carErrorOf(() => parseProposal({ actions: [...left, ...right] }));
    expect(error.code).toBe("invalid_proposal");
    expect(error.details.problems).toEqual([
      { pointer: "/actions/399/parameters/x", message: "'l0' is not a dependency of 'r199', so its output is not available" },
    ]);
  });
});
