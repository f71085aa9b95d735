import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { exceeds, jsonPieces } from "./json-pieces.ts";

/** Strings long enough to be cut, of any UTF-16 units (lone surrogates and pairs included). */
const longString = fc.string({ unit: "binary", minLength: 20, maxLength: 200 });
const value = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.jsonValue({ maxDepth: 2 }),
    longString,
    fc.array(tie("value"), { maxLength: 6 }),
    fc.dictionary(fc.string({ maxLength: 6 }), tie("value"), { maxKeys: 6 }),
  ),
})).value;

describe("a JSON value's text in pieces", () => {
  it("joins to exactly what JSON.stringify writes, whatever the piece size", () => {
    fc.assert(
      fc.property(value, fc.integer({ min: 1, max: 64 }), (v, pieceChars) => {
        expect([...jsonPieces(v, pieceChars)].join("")).toBe(JSON.stringify(v));
      }),
      { numRuns: 300 },
    );
  });

  it("cuts a long string into bounded pieces without splitting a surrogate pair", () => {
    const text = "a😀é".repeat(100_000);
    const pieces = [...jsonPieces({ answer: text, inputs: [{ name: "x", answer: text }] }, 4_096)];
    expect(pieces.length).toBeGreaterThan(100);
    for (const piece of pieces) {
      expect(piece.length).toBeLessThanOrEqual(4_096 + 64);
      expect(piece).not.toMatch(/\\ud[89a-f]/i);
    }
    expect(JSON.parse(pieces.join(""))).toEqual({ answer: text, inputs: [{ name: "x", answer: text }] });
  });

  it("writes what JSON.stringify writes for values with no JSON form and for toJSON", () => {
    const odd = { a: undefined, b: [undefined, () => 1, Symbol("s")], c: new Date(0), d: Number.NaN, e: "y".repeat(50) };
    expect([...jsonPieces(odd, 8)].join("")).toBe(JSON.stringify(odd));
  });

  it("tells a value whose text is over the limit from one under it", () => {
    expect(exceeds({ answer: "x".repeat(2_000) }, 1_000)).toBe(true);
    expect(exceeds([["x".repeat(600)], ["y".repeat(600)]], 1_000)).toBe(true);
    expect(exceeds({ jsonrpc: "2.0", id: 1, result: { ok: true, rows: [1, 2, 3] } }, 1_000)).toBe(false);
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 1, max: 200 }), (v, limit) => {
        // Never says "small" of a value whose text is more than twice the limit.
        if (JSON.stringify(v).length > 2 * limit + 16) expect(exceeds(v, limit)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
