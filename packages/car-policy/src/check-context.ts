/**
 * Per-check values rules share instead of each recomputing them. One context
 * lives for one `check`: an object or array parameter is JSON-encoded at
 * most once however many rules read it (a string is its own form, and a
 * number, boolean or null costs less to encode again than to remember), and the parameters are joined for keyword search once.
 * The last parameter read is kept with its lowercased copy, because rules on
 * one parameter sit side by side (a file's `url` rules, then its `body`
 * rules); a check that needs none of this allocates only the context.
 */
import { type Action, getOwn, type JsonValue } from "@car/ir";
import { stringCoerce } from "@car/ir/internal";
import type { CharSet, NormalisationIndex } from "./gate/normalisation-index.ts";

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
  /**
   * `compute(action, this)`, computed at most once per check for every rule
   * that asks with the same `key` (a module-level function: no closure per rule).
   */
  once<T>(key: object, compute: (action: Action, context: CheckContext) => T): T;
  /**
   * Which parameters the rules judging this call could match once
   * normalised (the engine's index for the call's tool); `undefined`:
   * normalise every parameter.
   */
  readonly normalisation: NormalisationIndex | undefined;
}

export class LazyCheckContext implements CheckContext {
  #all: (readonly [string, string])[] | undefined;
  #joined: string | undefined;
  /** The last parameter read, its string form and (once asked for) its lowercased form. */
  #lastKey: string | undefined;
  #lastText: string | undefined;
  #lastLower: string | undefined;
  /** String forms of parameters that are objects or arrays, by key. */
  #encoded: Map<string, string> | undefined;
  /** One text whose exact ASCII characters a search already read (`rememberChars`), as four words. */
  #charsOf: string | undefined;
  #chars0 = 0;
  #chars1 = 0;
  #chars2 = 0;
  #chars3 = 0;
  /** The one value rules share today (the normalised call); a second key would add a field. */
  #onceKey: object | undefined;
  #onceValue: unknown;

  constructor(
    readonly action: Action,
    readonly normalisation: NormalisationIndex | undefined = undefined,
  ) {}

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
      // Keys from Object.keys are own properties, so a plain read is an own read here.
      const params = this.action.parameters;
      const keys = Object.keys(params);
      let joined = "";
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i] as string;
        const value = params[key];
        const text = typeof value === "string" ? value : (this.paramString(key) as string);
        joined = i === 0 ? text : `${joined}\u0000${text}`;
      }
      this.#joined = joined;
    }
    return this.#joined;
  }

  paramString(key: string): string | undefined {
    if (key === this.#lastKey) return this.#lastText;
    const value = getOwn(this.action.parameters, key);
    let text: string | undefined;
    if (value === undefined || typeof value === "string") text = value;
    // A number, boolean or null encodes in a few nanoseconds: cheaper again than remembering it in a map made for the check.
    else if (typeof value !== "object" || value === null) text = stringCoerce(value as JsonValue);
    else {
      text = this.#encoded?.get(key);
      if (text === undefined) {
        text = stringCoerce(value as JsonValue);
        (this.#encoded ??= new Map()).set(key, text);
      }
    }
    this.#lastKey = key;
    this.#lastText = text;
    this.#lastLower = undefined;
    return text;
  }

  lowerParamString(key: string): string | undefined {
    const text = this.paramString(key);
    if (text === undefined) return undefined;
    return (this.#lastLower ??= text.toLowerCase());
  }

  /** Remembers that `text` holds exactly the ASCII characters of these four words (a `CharSet`), and nothing beyond ASCII. */
  rememberChars(text: string, w0: number, w1: number, w2: number, w3: number): void {
    this.#charsOf = text;
    this.#chars0 = w0;
    this.#chars1 = w1;
    this.#chars2 = w2;
    this.#chars3 = w3;
  }

  /** The remembered characters of `text`, written into `set`; `undefined` when `text` is not the one remembered. */
  charsOf(text: string, set: CharSet): CharSet | undefined {
    if (this.#charsOf === undefined || this.#charsOf !== text) return undefined;
    set[0] = this.#chars0;
    set[1] = this.#chars1;
    set[2] = this.#chars2;
    set[3] = this.#chars3;
    return set;
  }

  once<T>(key: object, compute: (action: Action, context: CheckContext) => T): T {
    if (this.#onceKey !== key) {
      this.#onceValue = compute(this.action, this);
      this.#onceKey = key;
    }
    return this.#onceValue as T;
  }
}
