/**
 * `shellQuote` against a real shell: whatever the words hold, `sh` hands the
 * program exactly those bytes — the hook's wrap depends on it, since the
 * agent writes the command it quotes.
 */
import { execFileSync } from "node:child_process";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { shellQuote } from "./shell-quote.ts";

/** Each argument `sh` passes to the program, NUL-separated. */
function wordsAfterShell(line: string): string[] {
  const out = execFileSync("sh", ["-c", `printf '%s\\0' ${line}`], { encoding: "utf8" });
  return out.split("\0").slice(0, -1);
}

describe("shellQuote", () => {
  it("hands sh back exactly the words, quotes, dollars, backticks and newlines included", () => {
    // No NUL: a shell word cannot carry one (and a command line never does).
    const word = fc.string({ unit: "grapheme", maxLength: 40 }).filter((w) => !w.includes("\0"));
    const tricky = fc.constantFrom("'", "'\\''", '"$(id)"', "`id`", "$HOME", "a b", "\n", "*", "--", "-c", "'; rm -rf / #", "");
    fc.assert(
      fc.property(fc.array(fc.oneof(word, tricky), { minLength: 1, maxLength: 5 }), (words) => {
        expect(wordsAfterShell(shellQuote(words))).toEqual(words);
      }),
      { numRuns: 150 },
    );
  });
});
