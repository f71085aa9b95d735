/**
 * The read side every `StateStore` shares: the present keys' values (in
 * first-write order) and every written key's version (kept across a delete).
 * Reads hand out copies, so a caller can never change state behind a store's
 * back. Each store keeps its own write path (how a version is chosen, where
 * the change is persisted) and drives the maps through `put` / `remove` /
 * `setVersion`.
 */
import { cloneJson, emptyMap, hasKey, jsonEquals, setOwn } from "@car/ir";
import type { JsonValue } from "@car/ir";
import type { StateEntry } from "./state-store.ts";

/** What `restore(snapshot)` must change: keys to delete, then keys to set. */
export interface StateDiff {
  removed: string[];
  changed: Array<[key: string, value: JsonValue]>;
}

export class VersionedValues {
  readonly #values = new Map<string, JsonValue>();
  readonly #versions = new Map<string, number>();

  get(key: string): JsonValue | undefined {
    const value = this.#values.get(key);
    return value === undefined ? undefined : cloneJson(value);
  }

  exists(key: string): boolean {
    return this.#values.has(key);
  }

  version(key: string): number {
    return this.#versions.get(key) ?? 0;
  }

  keys(): string[] {
    return [...this.#values.keys()];
  }

  entries(): StateEntry[] {
    return [...this.#values].map(([key, value]) => ({ key, value: cloneJson(value), version: this.version(key) }));
  }

  snapshot(): Record<string, JsonValue> {
    const out = emptyMap();
    for (const [key, value] of this.#values) setOwn(out, key, cloneJson(value));
    return out;
  }

  /** Stores `value` as it is: the caller hands over a copy nobody else holds. */
  put(key: string, value: JsonValue): void {
    this.#values.set(key, value);
  }

  /** Drops the value (the version stays); false when the key was absent. */
  remove(key: string): boolean {
    return this.#values.delete(key);
  }

  setVersion(key: string, version: number): void {
    this.#versions.set(key, version);
  }

  /** The changes that make the present values equal to `snapshot`. */
  diff(snapshot: Readonly<Record<string, JsonValue>>): StateDiff {
    const removed = [...this.#values.keys()].filter((key) => !hasKey(snapshot, key));
    const changed: StateDiff["changed"] = [];
    for (const key of Object.keys(snapshot)) {
      const value = snapshot[key]!;
      if (!this.#values.has(key) || !jsonEquals(this.#values.get(key), value)) changed.push([key, value]);
    }
    return { removed, changed };
  }
}
