import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { STRING_INDEX_MIN_KEYS, StringIndex, stringIndex } from "./string-index.ts";

/** Keys that stress a string table: prototype names, the empty string, astral characters, lone surrogates, near-duplicates. */
const key = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom("__proto__", "constructor", "hasOwnProperty", "", " ", "a", "A", "a\u0000", "\u20ac", "\ud83d\ude00", "\ud800", "a\udfff"),
  },
  { weight: 3, arbitrary: fc.string({ maxLength: 4, unit: "binary" }) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 40 }).map((i) => `a${i}`) },
);

/** A table operation: `set` with a value, or a lookup. */
const op = fc.oneof(fc.record({ kind: fc.constant("set" as const), key, value: fc.integer() }), fc.record({ kind: fc.constant("get" as const), key }));

/** The same key built at run time: equal by `===`, not the same string object as the literal. */
function rebuilt(text: string): string {
  return [...text].join("");
}

describe("StringIndex", () => {
  it("answers like a Map after any sequence of sets and lookups, from any starting size (so through collisions and doublings)", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), fc.integer({ min: 0, max: 64 }), (ops, expected) => {
        const index = new StringIndex(expected);
        const map = new Map<string, number>();
        for (const o of ops) {
          if (o.kind === "set") {
            expect(index.set(o.key, o.value)).toBe(index);
            map.set(o.key, o.value);
          } else {
            expect(index.get(rebuilt(o.key))).toBe(map.get(o.key));
          }
          expect(index.size).toBe(map.size);
        }
        for (const [k, value] of map) expect(index.get(k)).toBe(value);
      }),
    );
  });

  it("keeps every key through many doublings, long ids included", () => {
    const index = new StringIndex();
    const ids = Array.from({ length: 5_000 }, (_, i) => (i % 2 === 0 ? `a${i}` : `${"x".repeat(40)}-${i}`));
    ids.forEach((id, i) => index.set(id, i));
    expect(index.size).toBe(ids.length);
    ids.forEach((id, i) => expect(index.get(rebuilt(id))).toBe(i));
    expect(index.get("a1")).toBeUndefined();
    expect(index.get("")).toBeUndefined();
  });

  it("is a Map for few expected keys and a StringIndex from STRING_INDEX_MIN_KEYS", () => {
    expect(stringIndex(STRING_INDEX_MIN_KEYS - 1)).toBeInstanceOf(Map);
    expect(stringIndex(STRING_INDEX_MIN_KEYS)).toBeInstanceOf(StringIndex);
  });
});
