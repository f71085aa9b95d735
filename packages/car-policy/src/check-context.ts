/**
 * Per-check values rules share instead of each recomputing them. One context
 * lives for one `check`: each parameter is read and coerced to its string
 * form at most once, and lowercased at most once, however many rules look at
 * it. A string parameter is its own string form, so only the other values
 * and lowercased copies need remembering; a check that needs neither
 * allocates nothing beyond the context itself.
 */
import { type Action, getOwn, type JsonValue, stringCoerce } from "@car/ir";

export interface CheckContext {
  /** Every parameter as `[key, string form]`, in key order. */
  paramStrings(): readonly (readonly [string, string])[];
  /**
   * Every parameter's string form joined by NUL: any substring of any one
   * parameter occurs in it, so one search can rule a needle out of all of
   * them (a hit still has to be confirmed per parameter).
   */
  joinedParamStrings(): string;
  /** One own parameter's string form (`stringCoerce`), or `undefined` when it is absent. */
  paramString(key: string): string | undefined;
  /** `paramString(key)` passed through `toLowerCase()`. */
  lowerParamString(key: string): string | undefined;
}

export class LazyCheckContext implements CheckContext {
  #all: (readonly [string, string])[] | undefined;
  #joined: string | undefined;
  /**
   * The last parameter resolved: rules on one parameter tend to sit side by
   * side (a file's rules for `url`, then for `body`), so this spares most
   * repeated own-property lookups.
   */
  #lastKey: string | undefined;
  #lastText: string | undefined;
  /** String forms of parameters that are not strings, by key. */
  #encoded: Map<string, string> | undefined;
  #lowered: Map<string, string> | undefined;

  constructor(readonly action: Action) {}

  paramStrings(): readonly (readonly [string, string])[] {
    if (this.#all === undefined) {
      const keys = Object.keys(this.action.parameters);
      const all: (readonly [string, string])[] = new Array(keys.length);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i] as string;
        all[i] = [key, this.paramString(key) as string];
      }
      this.#all = all;
    }
    return this.#all;
  }

  joinedParamStrings(): string {
    if (this.#joined === undefined) {
      const keys = Object.keys(this.action.parameters);
      let joined = keys.length > 0 ? (this.paramString(keys[0] as string) as string) : "";
      for (let i = 1; i < keys.length; i++) joined += `\u0000${this.paramString(keys[i] as string) as string}`;
      this.#joined = joined;
    }
    return this.#joined;
  }

  paramString(key: string): string | undefined {
    if (key === this.#lastKey) return this.#lastText;
    const value = getOwn(this.action.parameters, key);
    let text: string | undefined;
    if (value === undefined || typeof value === "string") text = value;
    else {
      text = this.#encoded?.get(key);
      if (text === undefined) {
        text = stringCoerce(value as JsonValue);
        (this.#encoded ??= new Map()).set(key, text);
      }
    }
    this.#lastKey = key;
    this.#lastText = text;
    return text;
  }

  lowerParamString(key: string): string | undefined {
    let lower = this.#lowered?.get(key);
    if (lower !== undefined) return lower;
    const text = this.paramString(key);
    if (text === undefined) return undefined;
    lower = text.toLowerCase();
    (this.#lowered ??= new Map()).set(key, lower);
    return lower;
  }
}
