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
    // `s?` makes the `s` optional: "http" and "://10." are required.
    expect(mayMatch("^https?://10\\.", "http://10.0.0.1")).toBe(true);
    expect(mayMatch("^https?://10\\.", "https://api.example.org/")).toBe(false);
    expect(literalPrefilter("^https?://10\\.")?.literals).toEqual(["://10.", "http"]);
    expect(literalPrefilter("\\d+abc\\.x*")?.literals).toEqual(["abc."]);
    expect(literalPrefilter("(?i)Pass\\s*=")?.literals).toEqual(["pass", "="]);
    expect(literalPrefilter("ab[c]de")?.literals).toEqual(["ab"]);
    expect(literalPrefilter("ab{2}cd")?.literals).toEqual(["a"]);
    // After an escape with an argument, nothing more is read: `\x41` is "A", not "41".
    expect(literalPrefilter("ab\\x41cd")?.literals).toEqual(["ab"]);
    expect(literalPrefilter("ab\\Qc\\.d\\E")?.literals).toEqual(["ab"]);
    expect(mayMatch("(?i)abc*", "AB")).toBe(true);
    expect(mayMatch("(?i)abc{0}", "ab")).toBe(true);
    expect(mayMatch("abc+", "ab")).toBe(true);
  });

  it("declines every shape it cannot vouch for", () => {
    for (const pattern of ["(?i)pass|word", "a|b", "(abc)", "[abc]", "\\d+", "(?s)abc", "a*", "(?i)", "^", ".", "(?i:abc)", "^(?i)abc", "\\Q", "a?b?"]) {
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

  it("relies on a fold table that matches re2js: only U+017F and U+212A fold onto printable ASCII", () => {
    const word = RE2JS.compile("(?i)^[ -~]$");
    const foreign: number[] = [];
    for (let cp = 0x80; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      if (word.test(String.fromCodePoint(cp))) foreign.push(cp);
    }
    expect(foreign).toEqual([0x17f, 0x212a]);
    for (let c = 0x20; c < 0x7f; c++) {
      const ch = String.fromCharCode(c);
      const literal = RE2JS.compile(`(?i)^\\Q${ch}\\E$`);
      const folds = Array.from({ length: 0x80 }, (_, d) => String.fromCharCode(d)).filter((x) => literal.test(x));
      expect(folds.sort()).toEqual([...new Set([ch.toLowerCase(), ch.toUpperCase()])].sort());
    }
  });

  it("never rules out an input RE2 matches (random patterns and inputs)", () => {
    const alphabet = ["a", "A", "b", "s", "S", "\u017f", "k", "K", "\u212a", "_", "0", "-", " ", "=", ".", ":", "/", "\u0130", "\u0131", "\u00df"];
    const text = fc.array(fc.constantFrom(...alphabet), { maxLength: 12 }).map((cs) => cs.join(""));
    const run = fc.array(fc.constantFrom("a", "A", "b", "s", "S", "k", "K", "_", "0"), { minLength: 1, maxLength: 4 }).map((cs) => cs.join(""));
    const piece = fc.oneof(
      run,
      fc.constantFrom(
        "",
        "?",
        "*",
        "+",
        "*?",
        "{0}",
        "{2}",
        "{0,1}",
        "\\s*=",
        "[a-z]*",
        "(?:b)?",
        "\\b",
        "$",
        ".",
        "(?-i)s",
        "(?i:k)",
        "\\.",
        "\\.?",
        "://",
        "\\d+",
        "\\Qa.b\\E",
        "\\Qa\\.b\\E",
        "\\x41",
        "\\x{41}b",
        "\\pL",
        "\\101",
        "\\Q*\\E",
      ),
    );
    const pattern = fc
      .tuple(fc.constantFrom("", "(?i)"), fc.constantFrom("", "^"), fc.array(piece, { minLength: 1, maxLength: 5 }))
      .map(([flag, anchor, pieces]) => `${flag}${anchor}${pieces.join("")}`);
    fc.assert(
      fc.property(pattern, text, text, (p, before, after) => {
        const prefilter = literalPrefilter(p);
        if (prefilter === undefined) return;
        let regex: RE2JS;
        try {
          regex = RE2JS.compile(p);
        } catch {
          return;
        }
        const literalText = p.replace(/^\(\?i\)|^\^/g, "").replace(/\\(.)/g, "$1");
        for (const input of [before, `${before}${literalText}${after}`, `${before}${prefilter.literals.join(after)}`, after]) {
          if (regex.test(input)) expect(prefilter.mayMatch(prefilter.foldCase ? input.toLowerCase() : input)).toBe(true);
        }
      }),
      { numRuns: 3000 },
    );
  });
});
