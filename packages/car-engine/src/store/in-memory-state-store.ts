/**
 * The default `StateStore`: the shared values/versions maps and an
 * in-memory transition log. Values are copied on the way in and on the
 * way out, so a caller holding a value can never change the state behind
 * the store's back.
 */
import { cloneJson, systemClock } from "@car/ir";
import type { Clock, JsonValue, StateMutation } from "@car/ir";
import { DIRECT_WRITE } from "./state-store.ts";
import type { ChangeAttribution, StateEntry, StateStore, StateTransition, TransitionQuery } from "./state-store.ts";
import { TransitionLog } from "./transition-log.ts";
import { VersionedValues } from "./versioned-values.ts";

const DELETE: StateMutation = Object.freeze({ op: "delete" }) as StateMutation;

export interface InMemoryStateStoreOptions {
  clock?: Clock;
  /** Initial values (versions start at 1, attributed to no proposal). */
  initial?: Readonly<Record<string, JsonValue>>;
}

export class InMemoryStateStore implements StateStore {
  readonly #state = new VersionedValues();
  readonly #transitions: TransitionLog;

  constructor(options: InMemoryStateStoreOptions = {}) {
    this.#transitions = new TransitionLog(options.clock ?? systemClock);
    if (options.initial !== undefined) for (const key of Object.keys(options.initial)) this.set(key, options.initial[key]!);
  }

  get(key: string): JsonValue | undefined {
    return this.#state.get(key);
  }

  exists(key: string): boolean {
    return this.#state.exists(key);
  }

  version(key: string): number {
    return this.#state.version(key);
  }

  keys(): string[] {
    return this.#state.keys();
  }

  entries(): StateEntry[] {
    return this.#state.entries();
  }

  snapshot(): Record<string, JsonValue> {
    return this.#state.snapshot();
  }

  set(key: string, value: JsonValue, by: ChangeAttribution = DIRECT_WRITE): StateTransition {
    const stored = cloneJson(value);
    this.#state.put(key, stored);
    return this.#record(key, { op: "set", value: cloneJson(stored) }, by);
  }

  delete(key: string, by: ChangeAttribution = DIRECT_WRITE): StateTransition | null {
    if (!this.#state.remove(key)) return null;
    return this.#record(key, DELETE, by);
  }

  restore(snapshot: Readonly<Record<string, JsonValue>>, by: ChangeAttribution = DIRECT_WRITE): StateTransition[] {
    const { removed, changed } = this.#state.diff(snapshot);
    return [...removed.map((key) => this.delete(key, by)!), ...changed.map(([key, value]) => this.set(key, value, by))];
  }

  transitions(query: TransitionQuery = {}): StateTransition[] {
    return this.#transitions.select(query);
  }

  #record(key: string, mutation: StateMutation, by: ChangeAttribution): StateTransition {
    const version = this.version(key) + 1;
    this.#state.setVersion(key, version);
    return this.#transitions.record(key, mutation, version, by);
  }
}
