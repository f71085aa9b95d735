/**
 * The substring rules of a plan judged in one pass over the parameters,
 * instead of one rule call (and one search of a parameter) each. Each
 * parameter's string form is read once, into the set of its ASCII
 * characters (128 bits); a rule is looked at only if every character its
 * match needs is in that set — a text lacking one cannot match, and most
 * parameters lack some character of most rules' needles. Three kinds:
 *
 * - a `deny_keyword`: denies with the first parameter (in key order) whose
 *   string form contains the keyword;
 * - a `contains` test on one parameter: denies when its string form
 *   contains the value;
 * - a screened rule on one parameter (a regex with required literals,
 *   `literalPrefilter`): its own `evaluate` runs only when the parameter
 *   has every character of those literals (case-folded for `(?i)`).
 *
 * Text beyond ASCII has no set and meets every rule. The outcome is exactly
 * the rules' own. The set of a `command` is left on the context, so
 * bounding its normal form (the one parameter normalisation bounds by its
 * characters) does not walk it again.
 */
import type { Action, JsonValue } from "@car/ir";
import type { LazyCheckContext } from "./check-context.ts";
import type { Findings } from "./compiled-plan.ts";
import { evaluateSafely } from "./compiled-plan.ts";
import type { PolicyRule } from "./engine.ts";
import { mayNormalise } from "./gate/normalised-call.ts";
import { keywordReason } from "./rules/deny-keyword.ts";
import type { ScanShape } from "./rule-shapes.ts";
import type { StateLookup } from "./state.ts";

/** `:` (code 58): bit 26 of word 1. */
const COLON = 1 << 26;
const KEYWORD = 0;
const CONTAINS = 1;
const SCREENED = 2;
const SCREENED_FOLDED = 3;

export class ParameterScan {
  // One entry per rule, as parallel arrays: a check reads numbers and strings, never a shape object.
  readonly #positions: number[] = [];
  readonly #rules: PolicyRule[] = [];
  readonly #kinds: number[] = [];
  readonly #needles: string[] = [];
  readonly #reasons: string[] = [];
  /** Each entry's needed characters as four 32-bit words; a character beyond ASCII sets every bit (in no ASCII text). */
  #sets = new Int32Array(0);
  /** The entries that read every parameter (keywords), and those that read one, by parameter. */
  #everyParam: number[] = [];
  readonly #byParam = new Map<string, number[]>();

  get size(): number {
    return this.#rules.length;
  }

  /** The rules, with their positions: run one by one through `evaluate` if the scan throws. */
  entries(): { rule: PolicyRule; position: number }[] {
    return this.#rules.map((rule, i) => ({ rule, position: this.#positions[i] as number }));
  }

  add(position: number, rule: PolicyRule, shape: ScanShape): void {
    const entry = this.#rules.length;
    this.#positions.push(position);
    this.#rules.push(rule);
    this.#kinds.push(shape.kind === "keyword" ? KEYWORD : shape.kind === "contains" ? CONTAINS : shape.foldCase ? SCREENED_FOLDED : SCREENED);
    this.#needles.push(shape.kind === "screened" ? "" : shape.needle);
    this.#reasons.push(shape.kind === "contains" ? shape.reason : "");
    if (shape.param === undefined) this.#everyParam.push(entry);
    else {
      const list = this.#byParam.get(shape.param);
      if (list) list.push(entry);
      else this.#byParam.set(shape.param, [entry]);
    }
    const sets = new Int32Array(this.#sets.length + 4);
    sets.set(this.#sets);
    const at = this.#sets.length;
    const needed = shape.kind === "screened" ? shape.needs.join("") : shape.needle;
    for (let i = 0; i < needed.length; i++) {
      const c = needed.charCodeAt(i);
      if (c > 0x7f) {
        sets.fill(-1, at, at + 4);
        break;
      }
      sets[at + (c >> 5)] = (sets[at + (c >> 5)] as number) | (1 << (c & 31));
    }
    this.#sets = sets;
  }

  /**
   * Adds to `findings` what each rule finds, with its position. With
   * `screenNormal`, also asks of each parameter whether it may have a normal
   * form (`mayNormalise`, after its characters are known): `false` when none
   * may, so the check builds none.
   */
  scan(action: Action, state: StateLookup, context: LazyCheckContext, findings: Findings, screenNormal: boolean): boolean {
    const params = action.parameters;
    const keys = Object.keys(params);
    const every = this.#everyParam;
    let found: Uint8Array | undefined;
    let normalisable = false;
    for (let p = 0; p < keys.length; p++) {
      const key = keys[p] as string;
      const own = this.#byParam.get(key);
      // Keys from Object.keys are own properties, so a plain read is an own read here.
      const value = params[key] as JsonValue;
      if (every.length === 0 && own === undefined) {
        normalisable ||= screenNormal && mayNormalise(key, value, context.normalisation, context);
        continue;
      }
      const text = typeof value === "string" ? value : (context.paramString(key) as string);
      // `asciiCharSet`'s loop, inlined on purpose: calling it here measured 1.3 → 2.4 µs per decision (bench, 2026-12-03).
      let w0 = 0;
      let w1 = 0;
      let w2 = 0;
      let w3 = 0;
      let ascii = true;
      for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i);
        const bit = 1 << (c & 31);
        if (c < 64) {
          if (c < 32) w0 |= bit;
          else w1 |= bit;
        } else if (c < 96) w2 |= bit;
        else if (c < 128) w3 |= bit;
        else {
          ascii = false;
          break;
        }
      }
      if (ascii && key === "command") context.rememberChars(text, w0, w1, w2, w3);
      // Only a command, or a text with a scheme's `:` (a URL), may have a normal form.
      if (screenNormal && !normalisable && (key === "command" || !ascii || (w1 & COLON) !== 0))
        normalisable = mayNormalise(key, value, context.normalisation, context);
      for (let i = 0; i < every.length; i++) {
        const e = every[i] as number;
        if (found?.[e] === 1 || (ascii && this.#lacks(e, w0, w1, w2, w3)) || !text.includes(this.#needles[e] as string)) continue;
        (found ??= new Uint8Array(this.#rules.length))[e] = 1;
        findings.add(this.#positions[e] as number, keywordReason(key));
      }
      if (own === undefined) continue;
      // The lower case of the upper-case letters, for case-folded needles: word 2 bits 1–26 → word 3 bits 1–26.
      const folded3 = w3 | (w2 & 0x07fffffe);
      for (let i = 0; i < own.length; i++) {
        const e = own[i] as number;
        const kind = this.#kinds[e] as number;
        if (ascii && this.#lacks(e, w0, w1, w2, kind === SCREENED_FOLDED ? folded3 : w3)) continue;
        let reason: string | undefined;
        if (kind === CONTAINS) reason = text.includes(this.#needles[e] as string) ? (this.#reasons[e] as string) : undefined;
        else reason = evaluateSafely(this.#rules[e] as PolicyRule, action, state, context);
        if (reason !== undefined) findings.add(this.#positions[e] as number, reason);
      }
    }
    return normalisable;
  }

  /** Entry `e` needs a character the text's set (four words) lacks. */
  #lacks(e: number, w0: number, w1: number, w2: number, w3: number): boolean {
    const sets = this.#sets;
    const s = e * 4;
    return (((sets[s] as number) & ~w0) | ((sets[s + 1] as number) & ~w1) | ((sets[s + 2] as number) & ~w2) | ((sets[s + 3] as number) & ~w3)) !== 0;
  }
}
