/**
 * The native kernels against the TypeScript reference: identical levels and
 * orders, conflicts and findings, on random proposals and on hostile ones
 * (cycles, self-dependencies, repeated and unknown dependencies, many
 * writers of one key). "always" forces the kernels at every size.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { Action } from "@car/ir";
import { dependencyEdges, parseAction, parseProposal } from "@car/ir";
import { nativeKernels, nativeStatus, setNativeMode } from "@car/native";
import { nativeTestsSkipped } from "@car/native/testing";
import { conflictProposalJson, randomProposalJson } from "../bench/generate.ts";
import { transactionCheck, verify } from "../src/index.ts";
import { groupByKey } from "../src/key-groups.ts";
import { reachBatch } from "../src/reach.ts";
import { topoPositions } from "../src/topo-orders.ts";
import { proposalArb } from "./arbitraries.ts";

const initial = setNativeMode("auto");
afterAll(() => void setNativeMode(initial));

/** `f` run on the TypeScript path and on the native path. */
function bothPaths<T>(f: () => T): { ts: T | Error; native: T | Error } {
  const run = (mode: "off" | "always") => {
    setNativeMode(mode);
    try {
      return f();
    } catch (error) {
      return error as Error;
    } finally {
      setNativeMode("auto");
    }
  };
  return { ts: run("off"), native: run("always") };
}

const graphOf = (actions: readonly Action[]) => {
  const g = dependencyEdges(actions);
  return { order: g.order, level: g.level, preds: g.preds, succs: g.succs, flat: g.flat };
};

/**
 * Actions whose dependencies may point anywhere — forward, at themselves,
 * twice, at no one — some sharing an id, some with a huge fan-in.
 */
const hostileActions = fc.integer({ min: 1, max: 40 }).chain((n) =>
  fc
    .array(
      fc.record({
        deps: fc.oneof(
          { weight: 9, arbitrary: fc.array(fc.integer({ min: -1, max: n - 1 }), { maxLength: 4 }) },
          { weight: 1, arbitrary: fc.array(fc.integer({ min: 0, max: n - 1 }), { minLength: n, maxLength: 3 * n }) },
        ),
        duplicateId: fc.integer({ min: 0, max: 30 }),
        writes: fc.array(fc.constantFrom("k", "j"), { maxLength: 2 }),
        stateDeps: fc.array(fc.constantFrom("k", "j"), { maxLength: 1 }),
        stateWrite: fc.boolean(),
      }),
      { minLength: n, maxLength: n },
    )
    .map((specs) =>
      specs.map((s, i) =>
        parseAction({
          id: s.duplicateId === 0 && i > 0 ? `a${i - 1}` : `a${i}`,
          type: s.stateWrite ? "state_write" : "tool_call",
          ...(s.stateWrite ? { parameters: { key: "k", value: i } } : { tool: "t", parameters: { i } }),
          dependencies: s.deps.map((d) => (d < 0 ? "nobody" : `a${d}`)),
          state_dependencies: s.stateDeps,
          write_set: s.writes,
        }),
      ),
    ),
);

describe.skipIf(nativeTestsSkipped())("native and TypeScript paths agree", () => {
  it("the addon is loaded", () => {
    setNativeMode("always");
    const loaded = nativeKernels() !== undefined;
    setNativeMode("auto");
    expect(loaded, nativeStatus().reason).toBe(true);
  });

  it("on random proposals: the same verify result and transaction report", () => {
    fc.assert(
      fc.property(proposalArb, (proposal) => {
        const v = bothPaths(() => verify(proposal));
        expect(v.native).toEqual(v.ts);
        const t = bothPaths(() => transactionCheck(proposal));
        expect(t.native).toEqual(t.ts);
      }),
      { numRuns: 200 },
    );
  });

  it("on hostile dependency graphs: the same order, levels and edges, or the same error", () => {
    fc.assert(
      fc.property(hostileActions, (actions) => {
        const g = bothPaths(() => graphOf(actions));
        if (g.ts instanceof Error) {
          expect(g.native).toBeInstanceOf(Error);
          expect((g.native as Error).message).toBe(g.ts.message);
        } else {
          expect(g.native).toEqual(g.ts);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("on larger random DAGs and many writers of few keys: identical levels, conflicts and findings", () => {
    for (const text of [randomProposalJson(3000, 7), conflictProposalJson(3000)]) {
      const proposal = parseProposal(text);
      const v = bothPaths(() => verify(proposal));
      expect((v.ts as ReturnType<typeof verify>).conflicts.length).toBeGreaterThan(0);
      expect(v.native).toEqual(v.ts);
      const t = bothPaths(() => transactionCheck(proposal));
      expect(t.native).toEqual(t.ts);
    }
  });

  /** The default search budget, a small one (search and sweep share the queries) and none (the sweep answers all). */
  const budgets = fc.constantFrom(undefined, 2, 0);

  it("reachBatch: the same answers for any queries on acyclic hostile graphs (self, reversed, repeated, fan-in)", () => {
    fc.assert(
      fc.property(hostileActions, fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 200 }), budgets, (actions, queries, budget) => {
        let graph: ReturnType<typeof dependencyEdges>;
        try {
          graph = dependencyEdges(actions);
        } catch {
          return; // cycles, unknown and duplicate ids: covered above
        }
        const n = actions.length;
        const from = queries.map(([u]) => u % n);
        const to = queries.map(([u, v]) => (v % 4 === 0 ? u % n : v % n));
        const pos = topoPositions(graph);
        const answers = bothPaths(() => reachBatch(graph, pos, from, to, budget));
        expect(answers.native).toEqual(answers.ts);
      }),
      { numRuns: 300 },
    );
  });

  it("reachBatch: the same answers across several bitset chunks with a huge fan-in", () => {
    // 3,000 sources each reached by a chain, all feeding one sink.
    const n = 3000;
    const actions = Array.from({ length: n + 1 }, (_, i) =>
      parseAction({
        id: `a${i}`,
        type: "tool_call",
        tool: "t",
        parameters: {},
        dependencies: i === n ? Array.from({ length: n }, (_, j) => `a${j}`) : i % 3 === 0 ? [] : [`a${i - 1}`],
      }),
    );
    const graph = dependencyEdges(actions);
    const from = Array.from({ length: 4000 }, (_, k) => (k * 7) % n);
    // Every fifth query asks about the sink, every fifth the end of the source's chain.
    const to = from.map((u, k) => (k % 5 === 0 ? n : k % 5 === 1 ? u - (u % 3) + 2 : (k * 13) % n));
    const answers = bothPaths(() => reachBatch(graph, topoPositions(graph), from, to, 0));
    expect(answers.ts).toBeInstanceOf(Uint8Array);
    expect((answers.ts as Uint8Array).filter((a) => a === 1).length).toBeGreaterThan(1200);
    expect(answers.native).toEqual(answers.ts);
  });

  it("groupByKey: the same groups for random keys, repeats and one hot key", () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.constantFrom("hot", "k1", "k2", "k3", "__proto__"), { maxLength: 4 }), { minLength: 1, maxLength: 60 }), (keys) => {
        const graph = dependencyEdges(
          keys.map((_, i) => parseAction({ id: `a${i}`, type: "tool_call", tool: "t", parameters: {}, dependencies: i > 1 ? [`a${i >> 1}`] : [] })),
        );
        const groups = bothPaths(() => groupByKey(keys.length, (i, out) => out.push(...keys[i]!), graph.flat.order));
        expect(groups.native).toEqual(groups.ts);
      }),
      { numRuns: 200 },
    );
  });
});
