import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CarError, findOutputRefs, hasOutputRefs, InterpolationBudget, outputRefsOf, parseOutputRef, resolveOutputRefs, type JsonValue } from "./index.ts";

const outputs: Record<string, JsonValue> = { a1: { content: "hi", list: [10, { deep: true }], "": 0 }, "b.c": 7, n: null };
const lookup = (id: string) => (Object.hasOwn(outputs, id) ? { found: true, value: outputs[id]! } : { found: false });

describe("parseOutputRef", () => {
  it.each([
    ["$a1.output", { id: "a1", path: [] }],
    ["$a1.output.content", { id: "a1", path: ["content"] }],
    ["$a1.output.list.1.deep", { id: "a1", path: ["list", "1", "deep"] }],
    ["$b.c.output", { id: "b.c", path: [] }],
  ])("%s", (text, expected) => {
    expect(parseOutputRef(text)).toEqual(expected);
  });

  it.each(["a1.output", "$a1.outputs", "$a1.output.", "$.output", "x $a1.output", "$a1.output ", "$a1"])("%s is not a reference", (text) => {
    expect(parseOutputRef(text)).toBeUndefined();
  });
});

describe("resolveOutputRefs", () => {
  it("replaces whole-string references by the output or a field, recursively", () => {
    const resolved = resolveOutputRefs(
      {
        whole: "$a1.output",
        field: "$a1.output.content",
        indexed: ["$a1.output.list.0", { x: "$a1.output.list.1.deep" }],
        other: "$b.c.output",
        nil: "$n.output",
      },
      lookup,
    );
    expect(resolved).toEqual({ whole: outputs["a1"], field: "hi", indexed: [10, { x: true }], other: 7, nil: null });
  });

  it("leaves a reference inside a longer string as text, and other values alone", () => {
    const params = { text: "see $a1.output", n: 1, b: false, z: null, s: "$", o: { k: [1] } };
    expect(resolveOutputRefs(params, lookup)).toEqual(params);
  });

  it("shares the output instead of copying it, frozen, so the tool cannot mutate the producer's result", () => {
    const resolved = resolveOutputRefs({ x: "$a1.output.list", y: "$a1.output.list" }, lookup) as { x: unknown[]; y: unknown[] };
    expect(resolved.x).toBe((outputs["a1"] as { list: unknown[] }).list);
    expect(resolved.y).toBe(resolved.x);
    expect(() => resolved.x.push(1)).toThrow(TypeError);
    expect(() => ((resolved.x[1] as { deep: boolean }).deep = false)).toThrow(TypeError);
    expect((outputs["a1"] as { list: unknown[] }).list).toEqual([10, { deep: true }]);
  });

  it("references to one large output cost no memory per reference, and their total bytes are capped per budget", () => {
    const big: JsonValue = { blob: "x".repeat(1_400_000), rows: Array.from({ length: 1000 }, (_, i) => ({ i })) };
    const bigLookup = (id: string) => (id === "big" ? { found: true, value: big } : { found: false });
    const budget = new InterpolationBudget(8 * 1024 * 1024);
    // Five references fit (about 1.4 MB each) and share one value.
    const first = resolveOutputRefs({ refs: Array(5).fill("$big.output") }, bigLookup, budget) as { refs: JsonValue[] };
    expect(first.refs.every((r) => r === big)).toBe(true);
    expect(budget.used).toBeGreaterThan(5 * 1_400_000);
    // The budget spans calls (one per proposal): 400 more references are refused, naming the reference and pointer.
    try {
      resolveOutputRefs({ p: { q: Array(400).fill("$big.output.blob") } }, bigLookup, budget);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(CarError);
      expect((error as CarError).code).toBe("budget_exceeded");
      expect((error as CarError).message).toContain("$big.output.blob");
      expect((error as CarError).details["pointer"]).toBe("/p/q/0");
    }
    // Without a budget there is no cap.
    expect((resolveOutputRefs({ r: Array(400).fill("$big.output") }, bigLookup) as { r: unknown[] }).r).toHaveLength(400);
  });

  it("keeps __proto__ parameter keys as data", () => {
    const params = JSON.parse('{"__proto__":"$a1.output.content"}') as Record<string, JsonValue>;
    const resolved = resolveOutputRefs(params, lookup);
    expect(Object.keys(resolved)).toEqual(["__proto__"]);
    expect(Object.getOwnPropertyDescriptor(resolved, "__proto__")?.value).toBe("hi");
  });

  it("throws not_found for a missing output or field, naming the pointer", () => {
    for (const params of [{ p: ["$zz.output"] }, { p: ["$a1.output.nope"] }, { p: ["$a1.output.list.5"] }, { p: ["$a1.output.content.x"] }]) {
      try {
        resolveOutputRefs(params, lookup);
        expect.unreachable();
      } catch (error) {
        expect(error).toBeInstanceOf(CarError);
        expect((error as CarError).code).toBe("not_found");
        expect((error as CarError).details["pointer"]).toBe("/p/0");
      }
    }
  });
});

describe("outputRefsOf / findOutputRefs", () => {
  it("lists referenced ids once each, with escaped pointers", () => {
    expect(outputRefsOf({ a: "$x.output", b: ["$y.output.f", "$x.output"], c: "no $z.output" })).toEqual(["x", "y"]);
    expect(findOutputRefs({ "a/b": { "~": "$x.output" } })).toEqual([{ id: "x", path: [], pointer: "/a~1b/~0" }]);
  });
});

describe("hasOutputRefs", () => {
  it("is true exactly when outputRefsOf finds a reference, on random parameter trees", () => {
    const text = fc.oneof(
      fc.constantFrom("$a1.output", "$a1.output.x", "$b.c.output.1", "$.output", "$a1.outputs", "a1.output", "$a1.output.", "$", "x $a1.output"),
      fc.string(),
    );
    const tree = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: "small" },
        text,
        fc.integer(),
        fc.constant(null),
        fc.array(tie("value"), { maxLength: 3 }),
        fc.dictionary(fc.string(), tie("value"), { maxKeys: 3 }),
      ),
    })).value;
    fc.assert(
      fc.property(fc.dictionary(fc.string(), tree, { maxKeys: 4 }), (params) => {
        const p = params as Record<string, JsonValue>;
        expect(hasOutputRefs(p)).toBe(outputRefsOf(p).length > 0);
      }),
      { numRuns: 300 },
    );
  });
});
