import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { dependencyEdges, effectiveReadSet, effectiveWriteSet, evaluatePrecondition } from "@car/ir";
import type { Action, DependencyGraph } from "@car/ir";
import { DEFAULT_PROBES, optimize, simulate, simulateDetailed, transactionCheck, verify } from "../src/index.ts";
import { dataPredecessors } from "../src/walk.ts";
import { proposalArb, stateArb } from "./arbitraries.ts";

/** simulate's data predecessors with the last writer of every written key tracked, not only of the keys some action reads. */
function dataPredecessorsReference(actions: readonly Action[], graph: DependencyGraph): number[][] {
  const lastWriter = new Map<string, number>();
  return actions.map((action, i) => {
    const preds: number[] = [];
    for (const dep of action.dependencies) preds.push(graph.indexOf.get(dep)!);
    for (const key of action.state_dependencies) if (lastWriter.has(key)) preds.push(lastWriter.get(key)!);
    for (const key of effectiveWriteSet(action)) lastWriter.set(key, i);
    return preds;
  });
}

const BLOCKED = /^action '(.+?)'(?:: precondition failed| depends on state key)/;

describe("properties", () => {
  it("verify never throws on a proposal parseProposal accepts", () => {
    fc.assert(
      fc.property(proposalArb, stateArb, fc.integer({ min: 0, max: 12 }), (p, state, maxActions) => {
        const result = verify(p, { state, maxActions, tools: ["t1", { name: "t2", parameters: { type: "object", properties: { p: { type: "number" } } } }] });
        expect(result.valid).toBe(!result.issues.some((i) => i.severity === "error"));
      }),
      { numRuns: 300 },
    );
  });

  it("simulate never applies the effects of a provably blocked action", () => {
    fc.assert(
      fc.property(proposalArb, stateArb, (p, state) => {
        // Blocked by keys no action writes: blocked in every model, whatever lands (DECISIONS §13). An action verify
        // blocks only through another blocked action's declared write may land: the engine runs it.
        const written = new Set(p.actions.flatMap((a) => effectiveWriteSet(a)));
        const provably = (a: (typeof p.actions)[number]) => [...a.preconditions.map((c) => c.key), ...a.state_dependencies].every((k) => !written.has(k));
        const blocked = new Set(verify(p, { state }).issues.flatMap((i) => BLOCKED.exec(i.message)?.[1] ?? []));
        const outcome = simulateDetailed(p, state);
        for (const a of p.actions) if (blocked.has(a.id) && provably(a)) expect(outcome.skipped).toContain(a.id);
        // And nothing but landed actions (or the start state) explains the post-state.
        const landed = p.actions.filter((a) => !outcome.skipped.includes(a.id));
        for (const key of Object.keys(outcome.state)) {
          // A landed state_write's own key counts too (DECISIONS §15).
          const explained =
            Object.prototype.hasOwnProperty.call(state, key) ||
            landed.some((a) => Object.prototype.hasOwnProperty.call(a.expected_effects, key) || (a.type === "state_write" && a.parameters["key"] === key));
          expect(explained).toBe(true);
        }
      }),
      { numRuns: 2000 }, // the overwrite-then-gate case is rare; enough runs to reach it,
    );
  });

  it("simulate leaves the state simulateDetailed does; an action with no dependencies is skipped exactly when its gate fails on the start state", () => {
    fc.assert(
      fc.property(proposalArb, stateArb, (p, state) => {
        const outcome = simulateDetailed(p, state);
        expect(simulate(p, state)).toEqual(outcome.state);
        // An action with no dependencies whose gate fails on the start state alone is skipped, and one whose gate holds there is not.
        const written = new Set(p.actions.flatMap((a) => effectiveWriteSet(a)));
        for (const a of p.actions) {
          if (a.dependencies.length > 0 || a.state_dependencies.length > 0) continue;
          if (a.preconditions.some((c) => written.has(c.key))) continue;
          const holds = a.preconditions.every((c) => evaluatePrecondition(c, state).ok);
          expect(outcome.skipped.includes(a.id)).toBe(!holds);
        }
      }),
      { numRuns: 500 },
    );
  });

  it("optimize preserves simulate on every probe state", () => {
    fc.assert(
      fc.property(proposalArb, fc.array(stateArb, { maxLength: 3 }), (p, extra) => {
        const out = optimize(p);
        for (const probe of [...DEFAULT_PROBES, ...extra]) expect(simulate(out, probe)).toEqual(simulate(p, probe));
        expect(out.actions.map((a) => a.id)).toEqual(p.actions.map((a) => a.id));
        const depth = (q: typeof p) => Math.max(-1, ...dependencyEdges(q.actions).level);
        expect(depth(out)).toBeLessThanOrEqual(depth(p));
      }),
      { numRuns: 300 },
    );
  });

  it("write conflicts are exactly the same-key writer pairs with no path either way", () => {
    fc.assert(
      fc.property(proposalArb, (p) => {
        const graph = dependencyEdges(p.actions);
        const reaches = (from: number, to: number): boolean => {
          const seen = new Set<number>();
          const stack = [from];
          while (stack.length > 0) {
            const node = stack.pop()!;
            for (const s of graph.succs[node]!) {
              if (s === to) return true;
              if (!seen.has(s)) {
                seen.add(s);
                stack.push(s);
              }
            }
          }
          return false;
        };
        const expected: [string, string, string][] = [];
        const writes = p.actions.map(effectiveWriteSet);
        for (let j = 0; j < p.actions.length; j++) {
          for (let i = 0; i < j; i++) {
            if (reaches(i, j) || reaches(j, i)) continue;
            for (const key of writes[i]!) if (writes[j]!.includes(key)) expected.push([p.actions[i]!.id, p.actions[j]!.id, key]);
          }
        }
        const key = (t: [string, string, string]) => t.join("\u0001");
        expect(verify(p).conflicts.map(key).sort()).toEqual(expected.map(key).sort());
      }),
      { numRuns: 300 },
    );
  });

  it("transactionCheck reports exactly the unordered writer pairs and reader/writer pairs of each key, a pair racing as writers once", () => {
    fc.assert(
      fc.property(proposalArb, (p) => {
        const graph = dependencyEdges(p.actions);
        const reaches = (from: number, to: number): boolean => {
          const stack = [...graph.succs[from]!];
          while (stack.length > 0) {
            const node = stack.pop()!;
            if (node === to) return true;
            stack.push(...graph.succs[node]!);
          }
          return false;
        };
        const ordered = (i: number, j: number) => reaches(i, j) || reaches(j, i);
        const writes = p.actions.map(effectiveWriteSet);
        const reads = p.actions.map(effectiveReadSet);
        const id = (i: number) => p.actions[i]!.id;
        const expected: string[] = [];
        for (let j = 0; j < p.actions.length; j++) {
          for (let i = 0; i < p.actions.length; i++) {
            if (i === j || ordered(i, j)) continue;
            for (const key of writes[j]!) {
              if (i < j && writes[i]!.includes(key)) expected.push(`write_write ${key} '${id(i)}' and '${id(j)}' both write '${key}'`);
              if (reads[i]!.includes(key) && !writes[i]!.includes(key)) expected.push(`read_write ${key} '${id(i)}' reads '${key}' while '${id(j)}'`);
            }
          }
        }
        // The pair's order inside a write_write follows the topological order, so compare unordered pairs of names.
        const norm = (s: string) => s.replace(/'([^']+)' and '([^']+)'/, (_, a: string, b: string) => (a < b ? `'${a}' and '${b}'` : `'${b}' and '${a}'`));
        const found = transactionCheck(p).conflicts.map((c) => `${c.kind} ${c.key} ${c.explanation.split(" and neither")[0]!.split(", not ordered")[0]}`);
        expect(found.map(norm).sort()).toEqual(expected.map(norm).sort());
      }),
      { numRuns: 500 },
    );
  });

  it("simulate's data predecessors are the reference's, where only the keys some action reads are tracked", () => {
    // As sets: only whether a predecessor was skipped matters, and without a state_write they are the graph's deduplicated edges.
    const asSet = (row: ArrayLike<number>) => [...new Set(Array.from(row))].sort((x, y) => x - y);
    fc.assert(
      fc.property(proposalArb, (p) => {
        const graph = dependencyEdges(p.actions);
        const { start, preds } = dataPredecessors(p.actions, graph);
        const rows = p.actions.map((_, i) => asSet(Array.prototype.slice.call(preds, start[i]!, start[i + 1]!)));
        expect(rows).toEqual(dataPredecessorsReference(p.actions, graph).map(asSet));
      }),
      { numRuns: 500 },
    );
  });
});
