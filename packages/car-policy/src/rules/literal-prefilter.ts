/**
 * A substring test that runs before a `deny_tool_param_matching` regex and
 * only ever rules out inputs RE2 would reject anyway. RE2 (re2js) has a
 * literal prefilter of its own, but it skips case-folded literals — so
 * `(?i)password\s*=` walks every character of every input — and even where it
 * applies it costs a matcher setup per call (about a microsecond, where one
 * `includes` costs tens of nanoseconds). This reads only what it can vouch
 * for off the pattern text, and otherwise declines.
 *
 * The shape: an optional leading `(?i)` and no `|` anywhere in the pattern.
 * Without `|` the top level is one concatenation, so every match contains a
 * match of each of its parts in turn. Reading left to right, the runs of
 * literal characters at the top level are kept — a printable ASCII character
 * that is not a metacharacter, or a backslash before ASCII punctuation — and
 * each is required in every match:
 *  - a run ends at anything else: `.`, `^`, `$`, a class escape (`\d`,
 *    `\b`, `\Q`), a quantifier; reading stops for good at `(`, `[`, `{`, `)`,
 *    `]` or `}`, whose extent this does not parse (what was read before them
 *    still holds);
 *  - a quantifier (`?`, `*`, `+`, `{`) binds only to the one atom before it,
 *    so when that atom is the run's last character it is dropped from the run.
 * So `^https?://10\.` requires `http` and `://10.`, and `sk-[A-Za-z0-9]{20,}`
 * requires `sk-`. A pattern that does not parse never gets this far.
 *
 * Under `(?i)` a literal matches its simple case-fold orbit. For printable
 * ASCII that is the character itself, its other ASCII case, and two
 * non-ASCII runes: U+017F (long s, with `s`) and U+212A (Kelvin sign, with
 * `k`) — checked exhaustively against re2js in the tests. So a lowercased
 * input can only match if it contains each lowercased run or, when the run
 * has an `s` or a `k`, one of those runes.
 */

const METACHARACTERS = new Set([..."\\.[](){}*+?|^$"]);
const STOPS = new Set([..."([{)]}"]);
const QUANTIFIERS = new Set(["?", "*", "+", "{"]);
/** ASCII punctuation a backslash makes literal in RE2 syntax. */
const ESCAPABLE = /^[!-/:-@[-`{-~]$/;
/** Escapes that stand for one character class or assertion and take nothing after them. */
const ONE_CHARACTER_CLASSES = new Set([..."dDsSwWbBAz"]);
const FOLD_FLAG = "(?i)";

export interface LiteralPrefilter {
  /** `mayMatch` wants the input lowercased (`toLowerCase()`), because the literals are case-folded. */
  readonly foldCase: boolean;
  /** The longest run every match contains: lowercased when `foldCase` (then also matched by U+017F for `s` and U+212A for `k`). */
  readonly literal: string;
  /** Every run every match contains, longest first. */
  readonly literals: readonly string[];
  /** `false` only when the pattern cannot match an input whose (lowercased, if `foldCase`) form is `text`. */
  mayMatch(text: string): boolean;
}

/** The prefilter for `pattern`, or `undefined` when it has no literal this file can vouch for. */
export function literalPrefilter(pattern: string): LiteralPrefilter | undefined {
  if (pattern.includes("|")) return undefined;
  const foldCase = pattern.startsWith(FOLD_FLAG);
  const runs = requiredRuns(pattern, foldCase ? FOLD_FLAG.length : 0);
  if (runs.length === 0) return undefined;
  const literals = (foldCase ? runs.map((r) => r.toLowerCase()) : runs).sort((a, b) => b.length - a.length);
  const literal = literals[0] as string;
  if (!foldCase) return { foldCase, literal, literals, mayMatch: (text) => literals.every((run) => text.includes(run)) };
  const oddFolds = literals.map((run) => [...(run.includes("s") ? ["\u017f"] : []), ...(run.includes("k") ? ["\u212a"] : [])]);
  return {
    foldCase,
    literal,
    literals,
    mayMatch(lowerText) {
      for (let i = 0; i < literals.length; i++) {
        if (lowerText.includes(literals[i] as string)) continue;
        if (!(oddFolds[i] as string[]).some((rune) => lowerText.includes(rune))) return false;
      }
      return true;
    },
  };
}

/** The top-level literal runs of `pattern` from `start`, as described above. */
function requiredRuns(pattern: string, start: number): string[] {
  const runs: string[] = [];
  let run = "";
  const end = () => {
    if (run !== "") runs.push(run);
    run = "";
  };
  let i = start;
  while (i < pattern.length) {
    const c = pattern.charAt(i);
    if (QUANTIFIERS.has(c)) {
      // The quantifier takes the atom before it: the run's last character if the run is still open.
      run = run.slice(0, -1);
      end();
      if (c === "{") break;
      i++;
      continue;
    }
    if (STOPS.has(c)) break;
    if (c === "\\") {
      const next = pattern.charAt(i + 1);
      if (ESCAPABLE.test(next)) run += next;
      else if (ONE_CHARACTER_CLASSES.has(next)) end();
      // `\x41`, `\pL`, `\101`, `\Q…\E`: the text after the letter is not literal as written.
      else break;
      i += 2;
      continue;
    }
    const code = c.charCodeAt(0);
    if (METACHARACTERS.has(c) || code < 0x20 || code > 0x7e) end();
    else run += c;
    i++;
  }
  end();
  return runs;
}
