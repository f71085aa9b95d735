import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { writeJson } from "./json-stream.ts";

function streamed(value: unknown): { text: string; largest: number } {
  const parts: string[] = [];
  writeJson({ write: (t) => void parts.push(t), close: () => {} }, value);
  return { text: parts.join(""), largest: Math.max(...parts.map((p) => p.length)) };
}

describe("writeJson", () => {
  it("writes exactly what JSON.stringify(value, null, 2) gives", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), (value) => {
        expect(streamed(value).text).toBe(JSON.stringify(value, null, 2));
      }),
      { numRuns: 300 },
    );
  });

  it("never writes a large result as one piece", () => {
    const result = { valid: false, issues: Array.from({ length: 20_000 }, (_, i) => ({ action_id: `a${i}`, message: "m" })), conflicts: [] };
    const { text, largest } = streamed(result);
    expect(text).toBe(JSON.stringify(result, null, 2));
    expect(largest).toBeLessThan(200);
  });
});
