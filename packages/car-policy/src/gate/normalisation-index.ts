/**
 * Which parameters of a call are worth normalising, per rule set: a call is
 * normalised (its command parsed, its URL's hosts read) only where a rule
 * could match the normal form. Each rule that also judges the normalised
 * call says what it reads there (one parameter or every one) and the
 * substrings any match of it must contain (a keyword, a `contains` value, a
 * regex's required literal). Normalising only rearranges, unquotes and
 * respells: for a text it can vouch for, `normalFormAlphabet` bounds the
 * characters the normal form may hold, and a needle with a character outside
 * that set cannot occur in it. A parameter is normalised when some needle
 * read on it could, or when a rule reading it names no needle.
 *
 * The engine builds one index per tool plan; `PolicyEngine`'s
 * `normalisationIndex: false` normalises every parameter instead, the
 * reference the index is tested against.
 */
import type { PolicyRule } from "../engine.ts";

/** What a rule also judges on the normalised call. */
export interface NormalisedReads {
  /** The one parameter it reads; every parameter when absent. */
  readonly param?: string;
  /**
   * Substrings every match contains (any one of them suffices), compared
   * after lowercasing is allowed for; absent when the rule could match any
   * text (a regex with no required literal).
   */
  readonly needles?: readonly string[];
  /**
   * A needle whose presence in the text as sent makes the rule deny the call
   * as sent (a keyword, a `contains` value), so the rule never reads the
   * normal form of such a text.
   */
  readonly decisive?: string;
}

/** A set of ASCII characters as four 32-bit words (signed, so every word stays a small integer to V8). */
export type CharSet = Int32Array;

/** The ASCII characters of `text` (written into `set`), and `undefined` when it has any other. */
export function asciiCharSet(text: string, set: CharSet = new Int32Array(4)): CharSet | undefined {
  // Four locals, written to the set once: a typed-array store per character costs several times a register OR.
  let w0 = 0;
  let w1 = 0;
  let w2 = 0;
  let w3 = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const bit = 1 << (c & 31);
    if (c < 64) {
      if (c < 32) w0 |= bit;
      else w1 |= bit;
    } else if (c < 96) w2 |= bit;
    else if (c < 128) w3 |= bit;
    else return undefined;
  }
  set[0] = w0;
  set[1] = w1;
  set[2] = w2;
  set[3] = w3;
  return set;
}

/**
 * The characters of `text` and the lower case of its upper-case letters (a
 * case-folded regex literal is lower case), or `undefined` outside ASCII.
 * The set is one shared buffer, valid until the next call: a check reads it
 * at once, and this runs on every command a check meets.
 */
export function foldedCharSet(text: string): CharSet | undefined {
  const set = asciiCharSet(text, SCRATCH);
  return set === undefined ? undefined : foldCase(set);
}

/** `set` with the lower case of its upper-case letters added, in place. */
export function foldCase(set: CharSet): CharSet {
  // Upper-case letters (65–90) add their lower case (97–122): word 2 bits 1–26 → word 3 bits 1–26.
  set[3] = (set[3] as number) | ((set[2] as number) & 0x07fffffe);
  return set;
}

const SCRATCH: CharSet = new Int32Array(4);

/**
 * The needles of the rules reading one parameter (the every-parameter rules'
 * included), flattened for one loop: four words per needle, the rule each
 * belongs to, and each rule's decisive needle. A needle beyond ASCII has no
 * words — a bound is only ever known for ASCII text, which cannot contain it
 * — but text with no bound must still be normalised for it.
 */
class NeedleTable {
  /** A rule here may match any text. */
  any = false;
  words = new Int32Array(0);
  /** Some needle is beyond ASCII. */
  beyondAscii = false;
  ruleOf: number[] = [];
  decisive: (string | undefined)[] = [];

  add(reads: NormalisedReads): void {
    if (reads.needles === undefined) {
      this.any = true;
      return;
    }
    const rule = this.decisive.length;
    this.decisive.push(reads.decisive);
    for (const needle of reads.needles) {
      const set = asciiCharSet(needle);
      if (set === undefined) {
        this.beyondAscii = true;
        continue;
      }
      const words = new Int32Array(this.words.length + 4);
      words.set(this.words);
      words.set(set, this.words.length);
      this.words = words;
      this.ruleOf.push(rule);
    }
  }

  /** Some rule that did not already deny on `sent` has a needle within `bound`. */
  anyWithin(bound: CharSet, sent: string | undefined): boolean {
    const b0 = ~(bound[0] as number);
    const b1 = ~(bound[1] as number);
    const b2 = ~(bound[2] as number);
    const b3 = ~(bound[3] as number);
    const w = this.words;
    for (let n = 0, at = 0; at < w.length; n++, at += 4) {
      if ((((w[at] as number) & b0) | ((w[at + 1] as number) & b1) | ((w[at + 2] as number) & b2) | ((w[at + 3] as number) & b3)) !== 0) continue;
      const decisive = this.decisive[this.ruleOf[n] as number];
      if (decisive !== undefined && sent?.includes(decisive)) continue;
      return true;
    }
    return false;
  }
}

export class NormalisationIndex {
  /** For a parameter no rule names: the every-parameter rules alone. */
  readonly #every = new NeedleTable();
  readonly #byParam = new Map<string, NeedleTable>();

  /** The index of what `rules` read on the normalised call. */
  static of(rules: readonly PolicyRule[]): NormalisationIndex {
    const index = new NormalisationIndex();
    const reads = rules.flatMap((rule) => (rule.normalised === undefined ? [] : [rule.normalised]));
    for (const r of reads) if (r.param === undefined) index.#every.add(r);
    for (const r of reads) {
      if (r.param === undefined || index.#byParam.has(r.param)) continue;
      const table = new NeedleTable();
      for (const s of reads) if (s.param === undefined || s.param === r.param) table.add(s);
      index.#byParam.set(r.param, table);
    }
    return index;
  }

  /**
   * Whether a rule could match parameter `key` once normalised: `never`,
   * `always` (a rule reading it names no needle), or `bounded` — it depends
   * on the characters of the normal form (`anyWithin`).
   */
  reads(key: string): "never" | "always" | "bounded" {
    const table = this.#byParam.get(key) ?? this.#every;
    if (table.any) return "always";
    return table.words.length === 0 && !table.beyondAscii ? "never" : "bounded";
  }

  /**
   * Whether a rule could match parameter `key` once normalised, given
   * `bound`, a bound on the characters of its normal form (`undefined`: no
   * bound known), and `sent`, the parameter's text as sent when the rules
   * judged exactly that text (a string value).
   */
  anyWithin(key: string, bound: CharSet | undefined, sent: string | undefined): boolean {
    return bound === undefined || (this.#byParam.get(key) ?? this.#every).anyWithin(bound, sent);
  }
}
