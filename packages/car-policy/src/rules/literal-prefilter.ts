/**
 * A substring test that runs before a `deny_tool_param_matching` regex and
 * only ever rules out inputs RE2 would reject anyway. RE2 (re2js) has a
 * literal prefilter of its own, but it skips case-folded literals — so
 * `(?i)password\s*=` walks every character of every input — and even where it
 * applies it costs a matcher setup per call; one `includes` is cheaper. This
 * covers only the one shape whose required literal can be read off the
 * pattern text without doubt, and otherwise declines.
 *
 * The shape: an optional leading `(?i)`, an optional `^`, then a run of ASCII
 * word characters `[0-9A-Za-z_]`, and no `|` anywhere in the pattern. Why the
 * run (less its last character when a quantifier follows it) occurs in every
 * match:
 *  - outside `\…`, `[…]` and `(…)` a word character in RE2 syntax is a
 *    literal, and the run stops at the first character that is not one;
 *  - a quantifier (`?`, `*`, `+`, `{`) binds only to the single character
 *    before it, so dropping the last character leaves unquantified literals;
 *  - `(?i)` and `^` match no text, and without `|` the top level is one
 *    concatenation, so every match contains a match of the run. A pattern
 *    that does not parse never gets this far.
 *
 * Under `(?i)` a literal matches its simple case-fold orbit. For the ASCII
 * word characters that is the character itself, its other ASCII case, and two
 * non-ASCII runes: U+017F (long s, with `s`) and U+212A (Kelvin sign, with
 * `k`) — checked exhaustively against re2js in the tests. So a lowercased
 * input can only match if it contains the lowercased run or, when the run has
 * an `s` or a `k`, one of those runes.
 */

const WORD_CHAR = /[0-9A-Za-z_]/;
const QUANTIFIER_START = new Set(["?", "*", "+", "{"]);
const FOLD_FLAG = "(?i)";

export interface LiteralPrefilter {
  /** `mayMatch` wants the input lowercased (`toLowerCase()`), because the literal is case-folded. */
  readonly foldCase: boolean;
  /** The run every match contains: lowercased when `foldCase` (then also matched by U+017F for `s` and U+212A for `k`). */
  readonly literal: string;
  /** `false` only when the pattern cannot match an input whose (lowercased, if `foldCase`) form is `text`. */
  mayMatch(text: string): boolean;
}

/** The prefilter for `pattern`, or `undefined` when its shape is not the one this file can vouch for. */
export function literalPrefilter(pattern: string): LiteralPrefilter | undefined {
  if (pattern.includes("|")) return undefined;
  const foldCase = pattern.startsWith(FOLD_FLAG);
  const start = (foldCase ? FOLD_FLAG.length : 0) + (pattern.charAt(foldCase ? FOLD_FLAG.length : 0) === "^" ? 1 : 0);
  let end = start;
  while (end < pattern.length && WORD_CHAR.test(pattern.charAt(end))) end++;
  if (QUANTIFIER_START.has(pattern.charAt(end))) end--;
  if (end <= start) return undefined;
  const run = pattern.slice(start, end);
  if (!foldCase) return { foldCase, literal: run, mayMatch: (text) => text.includes(run) };
  const literal = run.toLowerCase();
  const oddFolds = [...(literal.includes("s") ? ["\u017f"] : []), ...(literal.includes("k") ? ["\u212a"] : [])];
  return {
    foldCase,
    literal,
    mayMatch(lowerText) {
      if (lowerText.includes(literal)) return true;
      for (const rune of oddFolds) if (lowerText.includes(rune)) return true;
      return false;
    },
  };
}
