import { describe, expect, it } from "vitest";
import { evaluatePrecondition, evaluatePreconditions, precondition, type JsonValue, type StateLookup } from "./index.ts";

const state: StateLookup = JSON.parse(
  '{"n":5,"s":"5","text":"hello world","list":[1,{"a":[2]},"x"],"nil":null,"obj":{"a":1,"b":[1,2]},"f":false,"__proto__":7}',
) as Record<string, JsonValue>;

function holds(key: string, operator: string, value: JsonValue = null, on: StateLookup = state): boolean {
  return evaluatePrecondition(precondition({ key, operator, value }), on).ok;
}

describe("evaluatePrecondition truth table", () => {
  it.each([
    // eq / neq: deep JSON equality, key order ignored, no coercion
    ["n", "eq", 5, true],
    ["n", "eq", 5.0, true],
    ["n", "eq", "5", false],
    ["s", "eq", "5", true],
    ["obj", "eq", { b: [1, 2], a: 1 }, true],
    ["obj", "eq", { a: 1 }, false],
    ["nil", "eq", null, true],
    ["missing", "eq", null, false],
    ["f", "eq", false, true],
    ["f", "eq", 0, false],
    ["n", "neq", 6, true],
    ["n", "neq", 5, false],
    ["obj", "neq", { a: 1, b: [1, 2] }, false],
    ["missing", "neq", 1, true],
    // ordered comparisons: both sides JSON numbers, else false
    ["n", "gt", 3, true],
    ["n", "gt", 5, false],
    ["n", "gte", 5, true],
    ["n", "lt", 6, true],
    ["n", "lt", 5, false],
    ["n", "lte", 5, true],
    ["s", "gt", 3, false],
    ["n", "gt", "3", false],
    ["s", "lte", "9", false],
    ["nil", "lt", 1, false],
    ["missing", "gte", 0, false],
    ["f", "lt", 1, false],
    // exists / not_exists: a key holding null exists
    ["nil", "exists", null, true],
    ["f", "exists", null, true],
    ["missing", "exists", null, false],
    ["nil", "not_exists", null, false],
    ["missing", "not_exists", null, true],
    // contains: substring for strings, deep membership for arrays, else false
    ["text", "contains", "lo wo", true],
    ["text", "contains", "bye", false],
    ["text", "contains", 5, false],
    ["s", "contains", "5", true],
    ["list", "contains", 1, true],
    ["list", "contains", { a: [2] }, true],
    ["list", "contains", "1", false],
    ["list", "contains", { a: [3] }, false],
    ["obj", "contains", "a", false],
    ["n", "contains", 5, false],
    ["nil", "contains", null, false],
    ["missing", "contains", "x", false],
    // unknown and mis-cased operators fail without throwing
    ["n", "EQ", 5, false],
    ["n", "Eq", 5, false],
    ["n", "equals", 5, false],
    ["n", "", 5, false],
    ["missing", "not_eq", 5, false],
  ] as const)("%s %s %j → %s", (key, op, value, expected) => {
    expect(holds(key, op, value as JsonValue)).toBe(expected);
  });

  it("treats __proto__ and Object.prototype names as ordinary state keys", () => {
    expect(holds("__proto__", "eq", 7)).toBe(true);
    expect(holds("toString", "exists")).toBe(false);
    expect(holds("constructor", "not_exists")).toBe(true);
  });

  it("reads a Map as well as a plain object", () => {
    const map = new Map<string, JsonValue>([
      ["k", [1, 2]],
      ["z", null],
    ]);
    expect(holds("k", "contains", 2, map)).toBe(true);
    expect(holds("z", "exists", null, map)).toBe(true);
    expect(holds("y", "exists", null, map)).toBe(false);
  });

  it("names key, operator and expectation in a failure", () => {
    const outcome = evaluatePrecondition(precondition({ key: "n", operator: "gt", value: 10, description: "enough" }), state);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.message).toContain("'n'");
      expect(outcome.message).toContain("gt");
      expect(outcome.message).toContain("10");
      expect(outcome.message).toContain("enough");
    }
    const unknown = evaluatePrecondition(precondition({ key: "n", operator: "EQ", value: 5 }), state);
    expect(unknown.ok ? "" : unknown.message).toContain("unknown operator 'EQ'");
  });

  it("adds the original's phrases for exists, not_exists and contains on an absent key", () => {
    const message = (key: string, operator: string, value: JsonValue = null): string => {
      const outcome = evaluatePrecondition(precondition({ key, operator, value }), state);
      return outcome.ok ? "" : outcome.message;
    };
    expect(message("ghost", "exists")).toContain("key 'ghost' does not exist");
    expect(message("n", "not_exists")).toContain("key 'n' exists but should not");
    expect(message("ghost", "contains", "x")).toContain("cannot check contains");
    // A present key that lacks the item is an ordinary failure, not an absent one.
    expect(message("text", "contains", "zzz")).not.toContain("cannot check contains");
    expect(message("n", "gt", 10)).not.toContain("does not exist");
  });

  it("evaluatePreconditions reports the first failure and passes an empty list", () => {
    expect(evaluatePreconditions([], state).ok).toBe(true);
    const outcome = evaluatePreconditions([precondition({ key: "n", value: 5 }), precondition({ key: "s", operator: "eq", value: 5 })], state);
    expect(outcome.ok ? "" : outcome.message).toContain("'s'");
  });
});
