import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { CarError, canonicalJson, paramsDigest } from "./index.ts";

describe("canonicalJson (RFC 8785)", () => {
  it("sorts keys by UTF-16 code units at every depth and drops whitespace", () => {
    expect(canonicalJson({ b: [true, null, "x"], a: 1 })).toBe('{"a":1,"b":[true,null,"x"]}');
    // "\u20ac" (U+20AC) sorts before "\ud83d\ude00" (surrogates D83D…) and after "a".
    expect(canonicalJson({ "\ud83d\ude00": 1, "\u20ac": 2, a: { z: 1, y: 2 } })).toBe('{"a":{"y":2,"z":1},"\u20ac":2,"\ud83d\ude00":1}');
  });

  it("formats numbers the ECMAScript way", () => {
    expect(canonicalJson([1e21, 1.5e-7, -0, 10.0, 0.1 + 0.2])).toBe("[1e+21,1.5e-7,0,10,0.30000000000000004]");
  });

  it("keeps __proto__ as an ordinary key", () => {
    expect(canonicalJson(JSON.parse('{"z":0,"__proto__":{"x":1}}') as Record<string, never>)).toBe('{"__proto__":{"x":1},"z":0}');
  });

  it("refuses values outside I-JSON with invalid_params", () => {
    expect(() => canonicalJson("\ud800")).toThrow(CarError);
    expect(() => canonicalJson(Number.NaN)).toThrow(CarError);
  });
});

describe("paramsDigest", () => {
  it("is the lowercase SHA-256 hex of the canonical form (known vectors)", () => {
    // sha256('{"a":1,"b":[true,null,"x"]}') and sha256('{}'), computed independently.
    expect(paramsDigest({ b: [true, null, "x"], a: 1 })).toBe("eca8cfb31ab74533e1eb2f4c74d2d55dfe3c79ac704787e54be8647ea7777eb1");
    expect(paramsDigest({})).toBe("44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
  });

  it("gives every empty record the digest of {} and leaves what only looks empty to the full path", () => {
    const empty = "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";
    expect(paramsDigest(Object.create(null) as Record<string, never>)).toBe(empty);
    expect(paramsDigest({})).toBe(empty);
    // An array, an object with only inherited members, and one that serialises through toJSON are not `{}`.
    expect(paramsDigest([])).toBe(createHash("sha256").update("[]", "utf8").digest("hex"));
    const withToJson = Object.defineProperty({}, "toJSON", { value: () => ({ a: 1 }), enumerable: false });
    expect(paramsDigest(withToJson as Record<string, never>)).toBe(
      createHash("sha256")
        .update(canonicalJson(withToJson as never), "utf8")
        .digest("hex"),
    );
    expect(paramsDigest(withToJson as Record<string, never>)).not.toBe(empty);
  });

  it("ignores key order and notices any value change", () => {
    expect(paramsDigest({ x: 1, y: [1, 2] })).toBe(paramsDigest({ y: [1, 2], x: 1 }));
    expect(paramsDigest({ x: 1, y: [2, 1] })).not.toBe(paramsDigest({ x: 1, y: [1, 2] }));
  });

  it("gives every value its own digest while its cache of recent forms fills, clears and refills", () => {
    const direct = (v: { i: number; s: string }): string => createHash("sha256").update(canonicalJson(v), "utf8").digest("hex");
    const long = "x".repeat(300);
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 700; i++) {
        const value = { i, s: i % 50 === 0 ? long : "short" };
        expect(paramsDigest(value)).toBe(direct(value));
      }
    }
  });
});
