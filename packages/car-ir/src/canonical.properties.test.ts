import canonicalize from "canonicalize";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CarError, canonicalJson, setOwn, type JsonValue } from "./index.ts";

/** Member names that stress ordering (integer-like, `__proto__`, astral and BMP characters above the surrogates, case), and lone surrogates now and then. */
const key = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom("__proto__", "constructor", "a", "B", "b", "1", "10", "9", "01", "-1", "4294967295", "\u20ac", "\ud83d\ude00", "\uffff", ""),
  },
  { weight: 4, arbitrary: fc.string({ maxLength: 5, unit: "grapheme" }) },
  { weight: 1, arbitrary: fc.constantFrom("\ud800", "a\udfff") },
);

/** Strings, including lone surrogates (no canonical form) now and then. */
const text = fc.oneof(
  { weight: 8, arbitrary: fc.string({ maxLength: 8, unit: "grapheme" }) },
  { weight: 1, arbitrary: fc.oneof(fc.string({ maxLength: 4, unit: "binary" }), fc.constantFrom("\udc00", "x\ud83d")) },
);

/** Numbers across JCS's formatting cases (exponents, -0, tiny and huge), and non-finite ones now and then. */
const number = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(-0, 1e21, 1e-7, 5e-324, Number.MAX_VALUE)),
  },
  { weight: 1, arbitrary: fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY) },
);

/** JSON values whose objects are built member by member in a random order, as JSON.parse or code would. */
const value: fc.Arbitrary<JsonValue> = fc.letrec<{ value: JsonValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    number,
    text,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.array(fc.tuple(key, tie("value")), { maxLength: 5 }).map((entries) => {
      const out: Record<string, JsonValue> = {};
      for (const [k, v] of entries) setOwn(out, k, v);
      return out;
    }),
  ),
})).value;

/** What the reference canonicaliser says: its text, or that there is none. */
function reference(input: JsonValue): string | "refused" {
  try {
    return canonicalize(input) ?? "refused";
  } catch {
    return "refused";
  }
}

function ours(input: JsonValue): string | "refused" {
  try {
    return canonicalJson(input);
  } catch (error) {
    expect(error).toBeInstanceOf(CarError);
    return "refused";
  }
}

describe("canonicalJson against the canonicalize package (RFC 8785)", () => {
  it("writes the same text, and refuses the same values", () => {
    fc.assert(
      fc.property(value, (input) => {
        expect(ours(input)).toBe(reference(input));
      }),
      { numRuns: 3000 },
    );
  });

  it("leaves its input untouched", () => {
    fc.assert(
      fc.property(value, (input) => {
        const before = JSON.stringify(input);
        ours(input);
        expect(JSON.stringify(input)).toBe(before);
      }),
    );
  });

  it("agrees on what the fast path hands over: toJSON, boxed values, undefined members, cycles, deep nesting", () => {
    const cases: unknown[] = [
      { when: new Date(0), n: 1 },
      [new Number(2), new String("s"), new Boolean(false)],
      { a: undefined, b: [undefined, () => 1], c: 1 },
      Object.assign([1, 2], { toJSON: () => "array" }),
    ];
    const deep: unknown[] = [];
    let at = deep;
    for (let i = 0; i < 20_000; i++) at.push((at = []));
    cases.push(deep);
    for (const input of cases) expect(ours(input as JsonValue)).toBe(reference(input as JsonValue));
    const cycle: Record<string, unknown> = { a: 1 };
    cycle["self"] = cycle;
    expect(() => canonicalJson(cycle as JsonValue)).toThrow(CarError);
  });
});
