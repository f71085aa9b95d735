import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { DependencyGraph } from "@car/ir";
import { setNativeMode } from "@car/native";
import { Reachability, reachBatch } from "./reach.ts";
import { topoPositions } from "./topo-orders.ts";
import { naiveReaches, randomGraph } from "../test/random-graphs.ts";

/** Checks every answer against a plain search; returns how many pairs are reachable. */
function expectNaiveAnswers(graph: DependencyGraph, from: readonly number[], to: readonly number[], answers: Uint8Array): number {
  let positives = 0;
  from.forEach((u, k) => {
    const expected = naiveReaches(graph.succs, u, to[k]!);
    if (expected) positives++;
    expect(answers[k] === 1).toBe(expected);
  });
  return positives;
}

describe("reachBatch", () => {
  // Budget 0 leaves every query to the bitset sweep, a small one splits them between search and sweep.
  it.each([
    { label: "the default", budget: undefined, reversed: false },
    { label: "a small", budget: 3, reversed: false },
    { label: "no", budget: 0, reversed: false },
    { label: "the default", budget: undefined, reversed: true },
    { label: "a small", budget: 3, reversed: true },
    { label: "no", budget: 0, reversed: true },
  ])("agrees with a graph search on random DAGs with $label search budget (declared last first: $reversed)", ({ budget, reversed }) => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), fc.integer(), (n, seed) => {
        const { graph, rand } = randomGraph(n, seed, reversed);
        const from = Array.from({ length: 80 }, () => rand(n));
        const to = Array.from({ length: 80 }, () => rand(n));
        const answers = reachBatch(graph, topoPositions(graph), from, to, budget);
        from.forEach((u, k) => expect(answers[k] === 1).toBe(naiveReaches(graph.succs, u, to[k]!)));
      }),
      { numRuns: 200 },
    );
  });

  it.each([false, true])(
    "stays exact on a larger DAG answered by the search alone, where both sides' heaps grow and meet (declared last first: %s)",
    (reversed) => {
      const n = 4000;
      const { graph, rand } = randomGraph(n, 11, reversed);
      const from = Array.from({ length: 3000 }, () => rand(n));
      const to = Array.from({ length: 3000 }, () => rand(n));
      const answers = reachBatch(graph, topoPositions(graph), from, to, Number.POSITIVE_INFINITY);
      expect(expectNaiveAnswers(graph, from, to, answers)).toBeGreaterThan(100);
    },
  );

  it.each(["off", "always"] as const)("stays exact when the sweep's sources span several bitset chunks (CAR_NATIVE=%s)", (mode) => {
    const n = 4000;
    const { graph, rand } = randomGraph(n, 7);
    const from = Array.from({ length: 3000 }, () => rand(n));
    const to = Array.from({ length: 3000 }, () => rand(n));
    const previous = setNativeMode(mode);
    let answers: Uint8Array;
    try {
      answers = reachBatch(graph, topoPositions(graph), from, to, 0);
    } finally {
      setNativeMode(previous);
    }
    expect(new Set(from).size).toBeGreaterThan(1024);
    expect(expectNaiveAnswers(graph, from, to, answers)).toBeGreaterThan(0);
  });
});

describe("Reachability", () => {
  // One instance keeps its index and search stamps from batch to batch: a stamp left by an earlier batch must never
  // pass for a later search's own.
  it.each([
    { label: "the default", budget: undefined },
    { label: "a small", budget: 3 },
    { label: "no", budget: 0 },
  ])("answers batch after batch as a graph search does, with $label search budget", ({ budget }) => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.integer(),
        fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 6 }),
        (n, seed, sizes) => {
          const { graph, rand } = randomGraph(n, seed);
          const reach = new Reachability(graph, topoPositions(graph), budget);
          for (const size of sizes) {
            const from = Array.from({ length: size }, () => rand(n));
            const to = Array.from({ length: size }, () => rand(n));
            const answers = reach.batch(from, to);
            expect(answers.length).toBe(size);
            from.forEach((u, k) => expect(answers[k] === 1).toBe(naiveReaches(graph.succs, u, to[k]!)));
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
