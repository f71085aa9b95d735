/**
 * The default `StateStore`: two Maps (values, versions) and an append-only
 * transition list. Values are copied on the way in and on the way out, so a
 * caller holding a value can never change the state behind the store's back.
 */
import { cloneJson, emptyMap, jsonEquals, rfc3339, setOwn, systemClock } from "@car/ir";
import type { Clock, JsonValue, StateMutation } from "@car/ir";
import { DIRECT_WRITE } from "./state-store.ts";
import type { ChangeAttribution, StateEntry, StateStore, StateTransition, TransitionQuery } from "./state-store.ts";

const DELETE: StateMutation = Object.freeze({ op: "delete" }) as StateMutation;

export interface InMemoryStateStoreOptions {
  clock?: Clock;
  /** Initial values (versions start at 1, attributed to no proposal). */
  initial?: Readonly<Record<string, JsonValue>>;
}

export class InMemoryStateStore implements StateStore {
  readonly #values = new Map<string, JsonValue>();
  readonly #versions = new Map<string, number>();
  readonly #transitions: StateTransition[] = [];
  readonly #clock: Clock;

  constructor(options: InMemoryStateStoreOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    if (options.initial !== undefined) for (const key of Object.keys(options.initial)) this.set(key, options.initial[key]!);
  }

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

  set(key: string, value: JsonValue, by: ChangeAttribution = DIRECT_WRITE): StateTransition {
    const stored = cloneJson(value);
    this.#values.set(key, stored);
    return this.#record(key, { op: "set", value: cloneJson(stored) }, by);
  }

  delete(key: string, by: ChangeAttribution = DIRECT_WRITE): StateTransition | null {
    if (!this.#values.delete(key)) return null;
    return this.#record(key, DELETE, by);
  }

  restore(snapshot: Readonly<Record<string, JsonValue>>, by: ChangeAttribution = DIRECT_WRITE): StateTransition[] {
    const changes: StateTransition[] = [];
    for (const key of [...this.#values.keys()]) {
      if (!Object.prototype.hasOwnProperty.call(snapshot, key)) changes.push(this.delete(key, by)!);
    }
    for (const key of Object.keys(snapshot)) {
      const value = snapshot[key]!;
      if (!this.#values.has(key) || !jsonEquals(this.#values.get(key), value)) changes.push(this.set(key, value, by));
    }
    return changes;
  }

  transitions(query: TransitionQuery = {}): StateTransition[] {
    return this.#transitions.filter(
      (t) =>
        (query.key === undefined || t.key === query.key) &&
        (query.proposal_id === undefined || t.proposal_id === query.proposal_id) &&
        (query.action_id === undefined || t.action_id === query.action_id),
    );
  }

  #record(key: string, mutation: StateMutation, by: ChangeAttribution): StateTransition {
    const previous = this.version(key);
    const version = previous + 1;
    this.#versions.set(key, version);
    const transition: StateTransition = {
      key,
      mutation,
      previous_version: previous,
      version,
      proposal_id: by.proposal_id,
      action_id: by.action_id,
      timestamp: rfc3339(this.#clock.now()),
    };
    this.#transitions.push(transition);
    return transition;
  }
}
