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
