/**
 * Tool results served without calling the tool again, keyed by tool and the
 * JCS form of the parameters. One cache covers both rules: an idempotent
 * call's result is reused (until its `cache_ttl_secs` lapses, if the tool
 * sets one), and any tool with `cache_ttl_secs` has its results reused for
 * that long. Bounded: the least recently used entry goes first.
 */
import { canonicalJson, cloneJson } from "@car/ir";
import type { JsonObject, JsonValue } from "@car/ir";

interface Entry {
  output: JsonValue;
  /** Clock ms after which the entry is stale; Infinity for idempotent results with no TTL. */
  expires: number;
}

export class ResultCache {
  readonly #entries = new Map<string, Entry>();
  readonly #capacity: number;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  static key(tool: string, params: JsonObject): string {
    return `${tool}\u0000${canonicalJson(params)}`;
  }

  get(key: string, now: number): { output: JsonValue } | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    if (entry.expires <= now) return undefined;
    this.#entries.set(key, entry);
    return { output: cloneJson(entry.output) };
  }

  set(key: string, output: JsonValue, expires: number): void {
    this.#entries.delete(key);
    this.#entries.set(key, { output: cloneJson(output), expires });
    if (this.#entries.size > this.#capacity) this.#entries.delete(this.#entries.keys().next().value as string);
  }

  /** Drops every entry for `tool` (its schema or implementation changed). */
  forget(tool: string): void {
    const prefix = `${tool}\u0000`;
    for (const key of [...this.#entries.keys()]) if (key.startsWith(prefix)) this.#entries.delete(key);
  }
}
