/**
 * The read side every state store shares: reads are answered from an
 * in-memory `VersionedValues` (the engine reads on its hot path, so never
 * from a database). Subclasses own how writes are versioned and persisted.
 */
import type { JsonValue } from "@car/ir";
import type { ChangeAttribution, StateEntry, StateStore, StateTransition, TransitionQuery } from "./state-store.ts";
import { VersionedValues } from "./versioned-values.ts";

export abstract class CachedStateStore implements StateStore {
  /** The current values and versions; a subclass may swap in a reloaded copy. */
  protected values = new VersionedValues();

  get(key: string): JsonValue | undefined {
    return this.values.get(key);
  }

  exists(key: string): boolean {
    return this.values.exists(key);
  }

  version(key: string): number {
    return this.values.version(key);
  }

  keys(): string[] {
    return this.values.keys();
  }

  entries(): StateEntry[] {
    return this.values.entries();
  }

  snapshot(): Record<string, JsonValue> {
    return this.values.snapshot();
  }

  abstract set(key: string, value: JsonValue, by?: ChangeAttribution): StateTransition;
  abstract delete(key: string, by?: ChangeAttribution): StateTransition | null;
  abstract restore(snapshot: Readonly<Record<string, JsonValue>>, by?: ChangeAttribution): StateTransition[];
  abstract transitions(query?: TransitionQuery): StateTransition[];
}
