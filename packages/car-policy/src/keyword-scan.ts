/**
 * Every `deny_keyword` rule of a plan judged in one pass over the
 * parameters, instead of one rule call (and one search of every parameter)
 * per keyword. Each parameter's string form is read once: its ASCII
 * characters as a 128-bit set, then each keyword is searched for only if
 * every one of its characters is in that set — a text lacking one cannot
 * contain it, and most parameters lack some character of most keywords.
 * The outcome is exactly the rules': a keyword denies with the first
 * parameter (in key order) whose string form contains it. The set of a
 * `command` is left on the context, so bounding its normal form (the one
 * parameter normalisation bounds by its characters) does not walk it again.
 */
import type { Action } from "@car/ir";
import type { LazyCheckContext } from "./check-context.ts";
import type { Findings } from "./compiled-plan.ts";
import { keywordReason } from "./rules/deny-keyword.ts";

export class KeywordScan {
  readonly #positions: number[] = [];
  readonly #keywords: string[] = [];
  /** Each keyword's characters as four 32-bit words; a keyword with a character beyond ASCII has every bit set (in no ASCII text). */
  #sets = new Int32Array(0);

  get size(): number {
    return this.#keywords.length;
  }

  add(position: number, keyword: string): void {
    this.#positions.push(position);
    this.#keywords.push(keyword);
    const sets = new Int32Array(this.#sets.length + 4);
    sets.set(this.#sets);
    const at = this.#sets.length;
    for (let i = 0; i < keyword.length; i++) {
      const c = keyword.charCodeAt(i);
      if (c > 0x7f) {
        sets.fill(-1, at, at + 4);
        break;
      }
      sets[at + (c >> 5)] = (sets[at + (c >> 5)] as number) | (1 << (c & 31));
    }
    this.#sets = sets;
  }

  /** Adds to `findings` each keyword some parameter contains, with its rule's position and reason. */
  scan(action: Action, context: LazyCheckContext, findings: Findings): void {
    const params = action.parameters;
    const keys = Object.keys(params);
    const keywords = this.#keywords;
    const sets = this.#sets;
    let found: Uint8Array | undefined;
    for (let p = 0; p < keys.length; p++) {
      const key = keys[p] as string;
      // Keys from Object.keys are own properties, so a plain read is an own read here.
      const value = params[key];
      const text = typeof value === "string" ? value : (context.paramString(key) as string);
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
      for (let k = 0; k < keywords.length; k++) {
        if (found !== undefined && found[k] === 1) continue;
        const s = k * 4;
        if (ascii && (((sets[s] as number) & ~w0) | ((sets[s + 1] as number) & ~w1) | ((sets[s + 2] as number) & ~w2) | ((sets[s + 3] as number) & ~w3)) !== 0)
          continue;
        if (!text.includes(keywords[k] as string)) continue;
        (found ??= new Uint8Array(keywords.length))[k] = 1;
        findings.add(this.#positions[k] as number, keywordReason(key));
      }
    }
  }
}
