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
  return { order: g.order, level: g.level, preds: g.preds, succs: g.succs };
};

/** Actions whose dependencies may point anywhere — forward, at themselves, twice, at no one. */
const hostileActions = fc.integer({ min: 1, max: 40 }).chain((n) =>
  fc
    .array(
      fc.record({
        deps: fc.array(fc.integer({ min: -1, max: n - 1 }), { maxLength: 4 }),
        writes: fc.array(fc.constantFrom("k", "j"), { maxLength: 2 }),
        stateDeps: fc.array(fc.constantFrom("k", "j"), { maxLength: 1 }),
        stateWrite: fc.boolean(),
      }),
      { minLength: n, maxLength: n },
    )
    .map((specs) =>
      specs.map((s, i) =>
        parseAction({
          id: `a${i}`,
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
});
