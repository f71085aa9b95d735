import fc from "fast-check";
import { RE2JS } from "re2js";
import { describe, expect, it } from "vitest";
import { literalPrefilter } from "./literal-prefilter.ts";

/** What the rule does: lowercase first when the prefilter folds case. */
function mayMatch(pattern: string, input: string): boolean {
  const prefilter = literalPrefilter(pattern);
  if (prefilter === undefined) throw new Error(`no prefilter for ${pattern}`);
  return prefilter.mayMatch(prefilter.foldCase ? input.toLowerCase() : input);
}

describe("literalPrefilter", () => {
  it("reads the leading literal run, minus a quantified last character", () => {
    expect(mayMatch("(?i)password\\s*=", "x PassWord = 1")).toBe(true);
    expect(mayMatch("(?i)password\\s*=", "nothing secret here")).toBe(false);
    expect(mayMatch("sk-[A-Za-z0-9]{20,}", "key=sk-abc")).toBe(true);
    expect(mayMatch("sk-[A-Za-z0-9]{20,}", "key=SK-abc")).toBe(false);
    // `s?` makes the `s` optional: only "http" is required.
    expect(mayMatch("^https?://10\\.", "http://10.0.0.1")).toBe(true);
    expect(mayMatch("(?i)abc*", "AB")).toBe(true);
    expect(mayMatch("(?i)abc{0}", "ab")).toBe(true);
    expect(mayMatch("abc+", "ab")).toBe(true);
  });

  it("declines every shape it cannot vouch for", () => {
    for (const pattern of ["(?i)pass|word", "a|b", "(abc)", "[abc]", "\\d+abc", "(?s)abc", "a*", "(?i)", "^", ".abc", "(?i:abc)", "^(?i)abc"]) {
      expect(literalPrefilter(pattern)).toBeUndefined();
    }
  });

  it("lets long s and the Kelvin sign through, which RE2 folds onto s and k", () => {
    expect(RE2JS.compile("(?i)pa\u017fsword").test("password")).toBe(true);
    expect(RE2JS.compile("(?i)password").test("pa\u017fsword")).toBe(true);
    expect(mayMatch("(?i)password", "pa\u017fsword")).toBe(true);
    expect(RE2JS.compile("(?i)key").test("\u212aEY")).toBe(true);
    expect(mayMatch("(?i)key", "\u212aEY")).toBe(true);
    // The dotless i folds onto nothing ASCII, so neither RE2 nor the prefilter lets it stand in for "i".
    expect(RE2JS.compile("(?i)ki").test("\u212a\u0131")).toBe(false);
    expect(mayMatch("(?i)ki", "\u212a\u0131")).toBe(false);
  });

  it("relies on a fold table that matches re2js: only U+017F and U+212A fold onto ASCII word characters", () => {
    const word = RE2JS.compile("(?i)^[0-9A-Za-z_]$");
    const foreign: number[] = [];
    for (let cp = 0x80; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      if (word.test(String.fromCodePoint(cp))) foreign.push(cp);
    }
    expect(foreign).toEqual([0x17f, 0x212a]);
    for (let c = 0; c < 0x80; c++) {
      const ch = String.fromCharCode(c);
      if (!/[0-9A-Za-z_]/.test(ch)) continue;
      const literal = RE2JS.compile(`(?i)^${ch}$`);
      const folds = Array.from({ length: 0x80 }, (_, d) => String.fromCharCode(d)).filter((x) => literal.test(x));
      expect(folds.sort()).toEqual([...new Set([ch.toLowerCase(), ch.toUpperCase()])].sort());
    }
  });

  it("never rules out an input RE2 matches (random patterns and inputs)", () => {
    const alphabet = ["a", "A", "b", "s", "S", "\u017f", "k", "K", "\u212a", "_", "0", "-", " ", "=", "\u0130", "\u0131", "\u00df"];
    const text = fc.array(fc.constantFrom(...alphabet), { maxLength: 12 }).map((cs) => cs.join(""));
    const run = fc.array(fc.constantFrom("a", "A", "b", "s", "S", "k", "K", "_", "0"), { minLength: 1, maxLength: 4 }).map((cs) => cs.join(""));
    const rest = fc.constantFrom("", "?", "*", "+", "{0}", "{2}", "{0,1}", "\\s*=", "[a-z]*", "(?:b)?", "\\b", "$", ".", "(?-i)s", "(?i:k)");
    const pattern = fc
      .tuple(fc.constantFrom("", "(?i)"), fc.constantFrom("", "^"), run, rest)
      .map(([flag, anchor, literal, tail]) => `${flag}${anchor}${literal}${tail}`);
    fc.assert(
      fc.property(pattern, text, text, (p, before, after) => {
        const prefilter = literalPrefilter(p);
        if (prefilter === undefined) return;
        const regex = RE2JS.compile(p);
        for (const input of [before, `${before}${p.replace(/^\(\?i\)|^\^/g, "")}${after}`, after]) {
          if (regex.test(input)) expect(prefilter.mayMatch(prefilter.foldCase ? input.toLowerCase() : input)).toBe(true);
        }
      }),
      { numRuns: 3000 },
    );
  });
});
