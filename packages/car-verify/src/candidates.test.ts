import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { naiveReaches, randomGraph } from "../test/random-graphs.ts";
import { CandidateBatch } from "./candidates.ts";
import { Reachability } from "./reach.ts";
import { topoPositions } from "./topo-orders.ts";

type Pair = [readWrite: number, key: number, ap: number, ai: number, bp: number, bi: number];

describe("CandidateBatch", () => {
  // Two proposals' DAGs; pairs within either and across both, added in a random order and flushed every `capacity`.
  it("hands on, in the order added, every cross-proposal pair and exactly the same-proposal pairs no path orders, whatever the batch size", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer(),
        fc.integer({ min: 1, max: 9 }),
        fc.array(fc.tuple(fc.nat(1), fc.nat(5), fc.nat(1), fc.nat(), fc.nat(1), fc.nat()), { maxLength: 60 }),
        (n0, n1, seed, capacity, raw) => {
          const graphs = [randomGraph(n0, seed).graph, randomGraph(n1, seed + 1).graph];
          const sizes = [n0, n1];
          const pairs: Pair[] = raw.map(([rw, key, ap, ai, bp, bi]) => [rw, key, ap, ai % sizes[ap]!, bp, bi % sizes[bp]!]);
          const handed: Pair[] = [];
          const batch = new CandidateBatch(
            graphs.map((g) => new Reachability(g, topoPositions(g))),
            (...pair) => handed.push(pair),
            capacity,
          );
          for (const pair of pairs) batch.add(...pair);
          batch.flush();
          const expected = pairs.filter(([, , ap, ai, bp, bi]) => {
            if (ap !== bp) return true;
            const succs = graphs[ap]!.succs;
            return !naiveReaches(succs, ai, bi) && !naiveReaches(succs, bi, ai);
          });
          expect(handed).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});
