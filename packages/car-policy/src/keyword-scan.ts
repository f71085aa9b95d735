/**
 * Every `deny_keyword` rule of a plan judged in one pass over the
 * parameters, instead of one rule call (and one search of every parameter)
 * per keyword. Each parameter's string form is searched once for all the
 * keywords together, with one regular expression that is only their
 * alternation (`a|b|c`, every character escaped): no quantifier, group or
 * class, so V8's engine takes at most the time of one `includes` per
 * keyword, however hostile the text. Only when it finds one (rare) is each
 * keyword looked for on its own. The outcome is exactly the rules': a
 * keyword denies with the first parameter (in key order) whose string form
 * contains it.
 */
import type { Action } from "@car/ir";
import type { CheckContext } from "./check-context.ts";
import type { Findings } from "./compiled-plan.ts";
import { keywordReason } from "./rules/deny-keyword.ts";

export class KeywordScan {
  readonly #positions: number[] = [];
  readonly #keywords: string[] = [];
  #any: RegExp | undefined;

  get size(): number {
    return this.#keywords.length;
  }

  add(position: number, keyword: string): void {
    this.#positions.push(position);
    this.#keywords.push(keyword);
    this.#any = new RegExp(this.#keywords.map(escapeLiteral).join("|"));
  }

  /** Adds to `findings` each keyword some parameter contains, with its rule's position and reason. */
  scan(action: Action, context: CheckContext, findings: Findings): void {
    const any = this.#any as RegExp;
    const params = action.parameters;
    const keys = Object.keys(params);
    let found: Uint8Array | undefined;
    for (let p = 0; p < keys.length; p++) {
      const key = keys[p] as string;
      // Keys from Object.keys are own properties, so a plain read is an own read here.
      const value = params[key];
      const text = typeof value === "string" ? value : (context.paramString(key) as string);
      if (!any.test(text)) continue;
      const keywords = this.#keywords;
      for (let k = 0; k < keywords.length; k++) {
        if (found?.[k] === 1 || !text.includes(keywords[k] as string)) continue;
        (found ??= new Uint8Array(keywords.length))[k] = 1;
        findings.add(this.#positions[k] as number, keywordReason(key));
      }
    }
  }
}

/** `text` as a regular expression matching exactly itself: letters and digits as they are, every other UTF-16 unit as `\uXXXX`. */
export function escapeLiteral(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    out += (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) ? text.charAt(i) : `\\u${c.toString(16).padStart(4, "0")}`;
  }
  return out;
}
