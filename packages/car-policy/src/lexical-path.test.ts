import { describe, expect, it } from "vitest";
import { lexicalPath } from "./lexical-path.ts";

describe("lexicalPath", () => {
  it("writes spellings of one path the same way, on the text alone", () => {
    const cases: [string, string][] = [
      ["src/../.env", ".env"],
      ["./.env", ".env"],
      ["a/b/../../.env", ".env"],
      ["//.env", "/.env"],
      ["/./.env", "/.env"],
      ["/tmp/..", "/"],
      ["/..", "/"],
      ["../x", "../x"],
      ["a/../../x", "../x"],
      [".", "."],
      ["", "."],
      ["a\\b", "a/b"],
    ];
    for (const [input, expected] of cases) expect(lexicalPath(input), input).toBe(expected);
  });
});
