import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildDag, dependencyEdges, newAction, sequentialIds, stateRead, stateWrite, toolCall, type Action } from "./index.ts";
import { pushWrittenKeys, successorRows } from "./internal.ts";
import { carErrorOf } from "../test/car-error.ts";

function act(id: string, extra: Partial<Action> = {}): Action {
  return newAction("assertion", { id, ...extra });
}

describe("dependencyEdges / buildDag", () => {
  it("levels independent actions together, in declaration order", () => {
    expect(buildDag([act("a"), act("b"), act("c", { dependencies: ["a"] }), act("d", { dependencies: ["c", "b"] })])).toEqual([["a", "b"], ["c"], ["d"]]);
  });

  it("accepts forward references through dependencies", () => {
    expect(buildDag([act("late", { dependencies: ["early"] }), act("early")])).toEqual([["early"], ["late"]]);
  });

  it("answers actions that are not a list (an edited JSON copy) with invalid_proposal, not a TypeError", () => {
    for (const actions of [{ key: null }, {}, null, "a"]) {
      expect(carErrorOf(() => buildDag(actions as unknown as Action[])).code).toBe("invalid_proposal");
      expect(carErrorOf(() => dependencyEdges(actions as unknown as Action[])).code).toBe("invalid_proposal");
    }
  });

  it("rejects unknown dependency ids with a pointer", () => {
    const error = carErrorOf(() => buildDag([act("a", { dependencies: ["ghost"] })]));
    expect(error.code).toBe("invalid_proposal");
    expect(error.details.problems).toEqual([{ pointer: "/actions/0/dependencies/0", message: "unknown action id 'ghost'" }]);
  });

  it("rejects duplicate ids, pointing at each repeat", () => {
    const error = carErrorOf(() => buildDag([act("a"), act("a"), act("a")]));
    expect(error.details.problems?.map((p) => p.pointer)).toEqual(["/actions/1/id", "/actions/2/id"]);
  });

  it("names the ids on a cycle and only those", () => {
    const error = carErrorOf(() =>
      buildDag([
        act("x"),
        act("a", { dependencies: ["c"] }),
        act("b", { dependencies: ["a"] }),
        act("c", { dependencies: ["b"] }),
        act("tail", { dependencies: ["a"] }),
      ]),
    );
    expect(error.code).toBe("invalid_proposal");
    expect([...(error.details["cycle"] as string[])].sort()).toEqual(["a", "b", "c"]);
    expect(error.message).toMatch(/cycle/);
  });

  it("rejects a self-dependency as a cycle", () => {
    expect(carErrorOf(() => buildDag([act("a", { dependencies: ["a"] })])).details["cycle"]).toEqual(["a"]);
  });

  it("orders a state_dependencies reader after the latest earlier writer only", () => {
    const ids = sequentialIds("x");
    const actions = [
      stateWrite("k", 1, { id: "w1" }, { ids }),
      toolCall("t", {}, { id: "w2", expected_effects: { k: 2 } }),
      act("r", { state_dependencies: ["k"] }),
      stateWrite("k", 3, { id: "w3" }),
    ];
    const g = dependencyEdges(actions);
    expect(g.preds[2]!.map((i) => g.ids[i])).toEqual(["w2"]);
    // The later writer does not become a predecessor of the earlier reader.
    expect(g.preds[3]!.map((i) => g.ids[i])).toEqual(["w1"]);
  });

  it("adds no edge for a key no earlier action writes, even if a later one does", () => {
    const g = dependencyEdges([act("r", { state_dependencies: ["k"] }), stateWrite("k", 1, { id: "w" })]);
    expect(g.preds[0]).toEqual([]);
    expect(buildDag([act("r", { state_dependencies: ["k"] }), stateWrite("k", 1, { id: "w" })])).toEqual([["r", "w"]]);
  });

  it("keeps state_writes to one key in declaration order and leaves other keys parallel", () => {
    expect(
      buildDag([stateWrite("k", 1, { id: "a" }), stateWrite("j", 1, { id: "b" }), stateWrite("k", 2, { id: "c" }), stateWrite("k", 3, { id: "d" })]),
    ).toEqual([["a", "b"], ["c"], ["d"]]);
  });

  it("uses the effective write set (explicit write_set counts)", () => {
    expect(buildDag([toolCall("t", {}, { id: "w", write_set: ["k"] }), stateRead("k", { id: "r", state_dependencies: ["k"] })])).toEqual([["w"], ["r"]]);
  });

  it("deduplicates an edge declared twice", () => {
    const g = dependencyEdges([act("a"), act("b", { dependencies: ["a", "a"], state_dependencies: [] })]);
    expect(g.preds[1]).toEqual([0]);
    expect(g.succs[0]).toEqual([1]);
  });

  it("handles an empty proposal", () => {
    expect(buildDag([])).toEqual([]);
  });
});

/**
 * A random DAG. Explicit edges follow a hidden rank; without state usage the
 * declaration order is shuffled, so `dependencies` may point forward. (With
 * state usage the rank is the declaration order: state edges point backward
 * in declaration order, and a mix could form a genuine cycle.)
 */
const randomDag = fc
  .integer({ min: 1, max: 40 })
  .chain((n) =>
    fc.tuple(
      fc.shuffledSubarray([...Array(n).keys()], { minLength: n, maxLength: n }),
      fc.array(fc.tuple(fc.nat(n - 1), fc.nat(n - 1)), { maxLength: n * 3 }),
      fc.array(fc.tuple(fc.nat(n - 1), fc.constantFrom("k1", "k2", "k3"), fc.boolean()), { maxLength: n }),
    ),
  )
  .map(([rankOrder, pairs, stateUse]) => {
    const n = rankOrder.length;
    const deps: string[][] = Array.from({ length: n }, () => []);
    for (const [x, y] of pairs) if (x !== y) deps[Math.max(x, y)]!.push(`r${Math.min(x, y)}`);
    const reads: string[][] = Array.from({ length: n }, () => []);
    const writes: string[][] = Array.from({ length: n }, () => []);
    for (const [i, key, isWrite] of stateUse) (isWrite ? writes : reads)[i]!.push(key);
    const order = stateUse.length > 0 ? [...rankOrder].sort((x, y) => x - y) : rankOrder;
    return order.map((rank) =>
      newAction(writes[rank]!.length > 0 && rank % 2 === 0 ? "state_write" : "assertion", {
        id: `r${rank}`,
        dependencies: deps[rank]!,
        state_dependencies: reads[rank]!,
        write_set: writes[rank]!,
      }),
    );
  });

describe("buildDag properties", () => {
  it("levels respect every edge and cover every action once", () => {
    fc.assert(
      fc.property(randomDag, (actions) => {
        const levels = buildDag(actions);
        const levelOf = new Map<string, number>();
        levels.forEach((ids, l) => ids.forEach((id) => levelOf.set(id, l)));
        expect(levelOf.size).toBe(actions.length);
        expect(levels.flat()).toHaveLength(actions.length);
        const g = dependencyEdges(actions);
        g.preds.forEach((ps, i) => {
          for (const p of ps) expect(levelOf.get(g.ids[p]!)!).toBeLessThan(levelOf.get(g.ids[i]!)!);
        });
        for (const a of actions) for (const d of a.dependencies) expect(levelOf.get(d)!).toBeLessThan(levelOf.get(a.id)!);
        // Inside a level, declaration order is kept.
        const position = new Map(actions.map((a, i) => [a.id, i]));
        for (const ids of levels) for (let k = 1; k < ids.length; k++) expect(position.get(ids[k]!)!).toBeGreaterThan(position.get(ids[k - 1]!)!);
        // state edges only ever point to earlier declarations.
        g.preds.forEach((ps, i) => {
          for (const p of ps) if (!actions[i]!.dependencies.includes(g.ids[p]!)) expect(p).toBeLessThan(i);
        });
      }),
      { numRuns: 300 },
    );
  });
});

/**
 * The edges by their definition, one action at a time and with nothing
 * skipped: explicit dependencies, then per `state_dependencies` key the
 * latest earlier writer, then for a `state_write` the previous `state_write`
 * of each key it writes; each predecessor once, first occurrence kept.
 */
function referencePreds(actions: readonly Action[]): number[][] {
  const indexOf = new Map(actions.map((a, i) => [a.id, i]));
  return actions.map((action, i) => {
    const out: number[] = [];
    const add = (j: number | undefined) => {
      if (j !== undefined && j >= 0 && j !== i && !out.includes(j)) out.push(j);
    };
    const writtenBy = (j: number) => {
      const keys: string[] = [];
      pushWrittenKeys(actions[j]!, keys);
      return keys;
    };
    for (const d of action.dependencies) add(indexOf.get(d));
    for (const key of action.state_dependencies) add(actions.findLastIndex((_, j) => j < i && writtenBy(j).includes(key)));
    if (action.type === "state_write") {
      for (const key of writtenBy(i)) add(actions.findLastIndex((a, j) => j < i && a.type === "state_write" && writtenBy(j).includes(key)));
    }
    return out;
  });
}

describe("dependencyEdges properties", () => {
  it("finds exactly the edges the rules define, and the same edges flat", () => {
    fc.assert(
      fc.property(randomDag, (actions) => {
        const g = dependencyEdges(actions);
        const expected = referencePreds(actions);
        expect(g.preds.map((ps) => [...ps])).toEqual(expected);
        const { predStart, preds } = g.flat;
        expect(expected.map((_, i) => [...preds.subarray(predStart[i]!, predStart[i + 1]!)])).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it("gives the successors flat in declaration order: every action waiting on p, each once", () => {
    fc.assert(
      fc.property(randomDag, (actions) => {
        const g = dependencyEdges(actions);
        const { succStart, succs } = successorRows(g.flat.predStart, g.flat.preds);
        const predsOf = referencePreds(actions);
        const expected = actions.map((_, p) => predsOf.flatMap((ps, i) => (ps.includes(p) ? [i] : [])));
        expect(expected.map((_, p) => [...succs.subarray(succStart[p]!, succStart[p + 1]!)])).toEqual(expected);
        expect(succStart[actions.length]).toBe(g.flat.preds.length);
      }),
      { numRuns: 300 },
    );
  });
});

describe("a proposal without edges", () => {
  const edgeFree = fc.array(fc.constantFrom("assertion", "tool_call", "state_read") as fc.Arbitrary<"assertion" | "tool_call" | "state_read">, {
    minLength: 0,
    maxLength: 40,
  });

  it("gets the graph the edge collection gives it (one lone state write forces that path)", () => {
    fc.assert(
      fc.property(edgeFree, (types) => {
        const actions = types.map((type, i) => newAction(type, { id: `e${i}`, ...(type === "tool_call" ? { tool: "t" } : {}) }));
        const fast = dependencyEdges(actions);
        const collected = dependencyEdges([...actions, stateWrite("k", 1, { id: "w" })]);
        const n = actions.length;
        expect(fast.ids).toEqual(actions.map((a) => a.id));
        expect(fast.order).toEqual(collected.order.slice(0, n));
        expect(fast.level).toEqual(collected.level.slice(0, n));
        expect(fast.preds).toEqual(collected.preds.slice(0, n));
        expect(fast.succs).toEqual(collected.succs.slice(0, n));
        expect([...fast.flat.predStart]).toEqual([...collected.flat.predStart.subarray(0, n + 1)]);
        expect([...fast.flat.preds]).toEqual([]);
        expect([...fast.flat.order]).toEqual([...collected.flat.order.subarray(0, n)]);
        expect([...fast.flat.level]).toEqual([...collected.flat.level.subarray(0, n)]);
        expect(buildDag(actions)).toEqual(n === 0 ? [] : [actions.map((a) => a.id)]);
      }),
      { numRuns: 200 },
    );
  });

  it("still refuses duplicate ids", () => {
    const error = carErrorOf(() => dependencyEdges([toolCall("t", {}, { id: "a" }), toolCall("t", {}, { id: "a" })]));
    expect(error.code).toBe("invalid_proposal");
  });
});
