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

/** A set of ASCII characters as four 32-bit words. */
export type CharSet = Uint32Array;

/** The ASCII characters of `text` (written into `set`), and `undefined` when it has any other. */
export function asciiCharSet(text: string, set: CharSet = new Uint32Array(4)): CharSet | undefined {
  set.fill(0);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x7f) return undefined;
    set[c >> 5] = (set[c >> 5] as number) | (1 << (c & 31));
  }
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
  // Upper-case letters (65–90) add their lower case (97–122): word 2 bits 1–26 → word 3 bits 1–26.
  if (set !== undefined) set[3] = (set[3] as number) | ((set[2] as number) & 0x07fffffe);
  return set;
}

const SCRATCH: CharSet = new Uint32Array(4);

/** What one rule reads on a parameter: its needles' character sets, and the needle that decides it as sent. */
interface RuleNeedles {
  /** A needle outside ASCII has no set (`NON_ASCII`: it cannot occur in ASCII text). */
  sets: CharSet[];
  decisive: string | undefined;
}

/** The rules that read one parameter, or every one. */
interface NeedleGroup {
  /** A rule here may match any text. */
  any: boolean;
  rules: RuleNeedles[];
}

export class NormalisationIndex {
  readonly #every: NeedleGroup = { any: false, rules: [] };
  readonly #byParam = new Map<string, NeedleGroup>();

  /** The index of what `rules` read on the normalised call. */
  static of(rules: readonly PolicyRule[]): NormalisationIndex {
    const index = new NormalisationIndex();
    for (const rule of rules) if (rule.normalised !== undefined) index.#add(rule.normalised);
    return index;
  }

  #add(reads: NormalisedReads): void {
    let group = this.#every;
    if (reads.param !== undefined) {
      group = this.#byParam.get(reads.param) ?? { any: false, rules: [] };
      this.#byParam.set(reads.param, group);
    }
    if (reads.needles === undefined) group.any = true;
    else if (reads.needles.length > 0) group.rules.push({ sets: reads.needles.map((n) => asciiCharSet(n) ?? NON_ASCII), decisive: reads.decisive });
  }

  /**
   * Whether a rule could match parameter `key` once normalised, given
   * `alphabet`, a bound on the characters of its normal form (`undefined`:
   * no bound known), and `sent`, the parameter's text as sent when the
   * rules judged exactly that text (a string value).
   */
  mayMatch(key: string, alphabet: () => CharSet | undefined, sent?: string): boolean {
    const own = this.#byParam.get(key);
    if (this.#every.any || own?.any === true) return true;
    if (this.#every.rules.length === 0 && (own === undefined || own.rules.length === 0)) return false;
    const bound = alphabet();
    if (bound === undefined) return true;
    return anyRuleWithin(this.#every.rules, bound, sent) || (own !== undefined && anyRuleWithin(own.rules, bound, sent));
  }
}

/** Some rule that did not already deny on `sent` has a needle within `bound`. */
function anyRuleWithin(rules: readonly RuleNeedles[], bound: CharSet, sent: string | undefined): boolean {
  for (const rule of rules) {
    if (!anyWithin(rule.sets, bound)) continue;
    if (rule.decisive !== undefined && sent?.includes(rule.decisive)) continue;
    return true;
  }
  return false;
}

/** Stands for a needle with a character outside ASCII: within no alphabet. */
const NON_ASCII: CharSet = Uint32Array.of(~0, ~0, ~0, ~0);

function anyWithin(needles: readonly CharSet[], bound: CharSet): boolean {
  for (const n of needles) {
    if (n === NON_ASCII) continue;
    if (
      ((n[0] as number) & ~(bound[0] as number)) === 0 &&
      ((n[1] as number) & ~(bound[1] as number)) === 0 &&
      ((n[2] as number) & ~(bound[2] as number)) === 0 &&
      ((n[3] as number) & ~(bound[3] as number)) === 0
    )
      return true;
  }
  return false;
}
