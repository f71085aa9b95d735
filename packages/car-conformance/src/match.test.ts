import { describe, expect, it } from "vitest";
import { match, matches } from "./match.ts";

describe("match", () => {
  it("object patterns match subsets; arrays match element by element", () => {
    expect(matches({ a: 1 }, { a: 1, b: 2 })).toBe(true);
    expect(matches({ a: 1 }, { a: 2 })).toBe(false);
    expect(matches([1, { x: true }], [1, { x: true, y: 0 }])).toBe(true);
    expect(matches([1], [1, 2])).toBe(false);
    expect(matches({ a: 1 }, [1])).toBe(false);
  });

  it("reports the path, the expected and the actual value of each mismatch", () => {
    expect(match({ results: [{ status: "succeeded" }, { status: "failed" }] }, { results: [{ status: "succeeded" }, { status: "skipped" }] })).toEqual([
      { path: "results[1].status", expected: "failed", actual: "skipped", message: "values differ" },
    ]);
    expect(match({ "odd key": 1 }, {})[0]).toMatchObject({ path: '["odd key"]', message: "expected a value, found none" });
  });

  it("operators", () => {
    expect(matches({ x: { $absent: true } }, {})).toBe(true);
    expect(matches({ x: { $absent: true } }, { x: null })).toBe(false);
    expect(matches({ $any: true }, null)).toBe(true);
    expect(matches({ $type: "array" }, [])).toBe(true);
    expect(matches({ $type: "object" }, [])).toBe(false);
    expect(matches({ $regex: "^[0-9a-f]{4}$" }, "beef")).toBe(true);
    expect(matches({ $regex: "^a" }, 1)).toBe(false);
    expect(matches({ $oneOf: ["rejected", "skipped"] }, "skipped")).toBe(true);
    expect(matches({ $oneOf: ["rejected", "skipped"] }, "failed")).toBe(false);
    expect(matches({ $gte: 100 }, 100)).toBe(true);
    expect(matches({ $lte: 1 }, 2)).toBe(false);
    expect(matches({ $contains: [{ k: 1 }] }, [{ k: 0 }, { k: 1, z: 2 }])).toBe(true);
    expect(matches({ $contains: [{ k: 3 }] }, [{ k: 0 }])).toBe(false);
    expect(matches({ $length: 2 }, [1, 2])).toBe(true);
    expect(matches({ $exact: { a: 1 } }, { a: 1 })).toBe(true);
    expect(matches({ $exact: { a: 1 } }, { a: 1, b: 2 })).toBe(false);
    expect(matches({ $not: { $contains: [{ severity: "error" }] } }, [{ severity: "warning" }])).toBe(true);
    expect(matches({ $not: { $contains: [{ severity: "error" }] } }, [{ severity: "error" }])).toBe(false);
    expect(matches({ $includes: "disk" }, "disk full")).toBe(true);
  });

  it("a one-key object with an ordinary key is a pattern, not an operator", () => {
    expect(matches({ $ref: "x" }, { $ref: "x", other: 1 })).toBe(true);
    expect(matches(JSON.parse('{"__proto__": 1}'), JSON.parse('{"__proto__": 2}'))).toBe(false);
    expect(matches(JSON.parse('{"__proto__": 1}'), JSON.parse('{"__proto__": 1}'))).toBe(true);
  });
});
