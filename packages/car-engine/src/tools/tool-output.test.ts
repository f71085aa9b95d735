import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ActionFailure } from "./action-failure.ts";
import { parseJsonOutput, toJsonOutput } from "./tool-output.ts";

const MAX = 1024;

describe("tool output must be I-JSON", () => {
  it("refuses a lone surrogate in a string, a nested value or a key, as a validation failure", () => {
    for (const value of ["\ud800", { text: "ok\udc00" }, ["a", ["\ud83d"]], { ["k\ud800"]: 1 }]) {
      const out = toJsonOutput(value, MAX);
      expect(out).toBeInstanceOf(ActionFailure);
      expect((out as ActionFailure).errorClass).toBe("validation");
    }
    const fromText = parseJsonOutput('{"text":"\\ud800"}', MAX);
    expect(fromText).toBeInstanceOf(ActionFailure);
    expect((fromText as ActionFailure).errorClass).toBe("validation");
  });

  it("accepts well-formed text, including paired surrogates", () => {
    expect(toJsonOutput({ text: "emoji \ud83d\ude00" }, MAX)).toEqual({ text: "emoji 😀" });
    expect(parseJsonOutput('{"text":"\\ud83d\\ude00"}', MAX)).toEqual({ text: "😀" });
    expect(toJsonOutput("plain", MAX)).toBe("plain");
  });
});

describe("flat outputs skip the JSON round trip and give what it gives", () => {
  const roundTrip = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

  it("matches the round trip on any flat record of JSON scalars, key order and -0 included", () => {
    const scalar = fc.oneof(fc.string(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));
    fc.assert(
      fc.property(fc.dictionary(fc.string(), scalar), (record) => {
        const out = toJsonOutput(record, 1 << 20);
        expect(Object.keys(out as object)).toEqual(Object.keys(roundTrip(record) as object));
        expect(out).toStrictEqual(roundTrip(record));
        expect(out).not.toBe(record);
      }),
    );
  });

  it("still refuses what the round trip refuses: the size limit, a throwing getter, a lone surrogate", () => {
    expect(toJsonOutput({ text: "x".repeat(MAX) }, MAX)).toBeInstanceOf(ActionFailure);
    const throwing = Object.defineProperty({}, "boom", {
      enumerable: true,
      get() {
        throw new Error("no");
      },
    });
    expect((toJsonOutput(throwing, MAX) as ActionFailure).message).toBe("tool output is not valid JSON: no");
    expect(toJsonOutput({ ["k\ud800"]: 1 }, MAX)).toBeInstanceOf(ActionFailure);
  });

  it("leaves to the round trip what it changes: toJSON, undefined members, __proto__ members, non-finite numbers", () => {
    const date = new Date(0);
    expect(toJsonOutput({ at: date }, MAX)).toEqual({ at: "1970-01-01T00:00:00.000Z" });
    expect(toJsonOutput({ a: undefined, b: 1 }, MAX)).toStrictEqual({ b: 1 });
    const proto = JSON.parse('{"__proto__":1,"x":2}') as object;
    const out = toJsonOutput(proto, MAX) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(["__proto__", "x"]);
    expect(toJsonOutput({ n: Number.POSITIVE_INFINITY }, MAX)).toStrictEqual({ n: null });
  });
});
