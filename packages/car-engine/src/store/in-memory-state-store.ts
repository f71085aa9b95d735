/**
 * The default `StateStore`: the shared values/versions maps and an
 * in-memory transition log. Values are copied on the way in and on the
 * way out, so a caller holding a value can never change the state behind
 * the store's back.
 */
import { CachedStateStore } from "./cached-state-store.ts";
import { cloneJson, systemClock } from "@car/ir";
import type { Clock, JsonValue, StateMutation } from "@car/ir";
import { DIRECT_WRITE } from "./state-store.ts";
import type { ChangeAttribution, StateTransition, TransitionQuery } from "./state-store.ts";
import { TransitionLog } from "./transition-log.ts";

const DELETE: StateMutation = Object.freeze({ op: "delete" }) as StateMutation;

export interface InMemoryStateStoreOptions {
  clock?: Clock;
  /** Initial values (versions start at 1, attributed to no proposal). */
  initial?: Readonly<Record<string, JsonValue>>;
}

export class InMemoryStateStore extends CachedStateStore {
  readonly #transitions: TransitionLog;

  constructor(options: InMemoryStateStoreOptions = {}) {
    super();
    this.#transitions = new TransitionLog(options.clock ?? systemClock);
    if (options.initial !== undefined) for (const key of Object.keys(options.initial)) this.set(key, options.initial[key]!);
  }

  set(key: string, value: JsonValue, by: ChangeAttribution = DIRECT_WRITE): StateTransition {
    const stored = cloneJson(value);
    this.values.put(key, stored);
    return this.#record(key, { op: "set", value: cloneJson(stored) }, by);
  }

  delete(key: string, by: ChangeAttribution = DIRECT_WRITE): StateTransition | null {
    if (!this.values.remove(key)) return null;
    return this.#record(key, DELETE, by);
  }

  restore(snapshot: Readonly<Record<string, JsonValue>>, by: ChangeAttribution = DIRECT_WRITE): StateTransition[] {
    const { removed, changed } = this.values.diff(snapshot);
    return [...removed.map((key) => this.delete(key, by)!), ...changed.map(([key, value]) => this.set(key, value, by))];
  }

  transitions(query: TransitionQuery = {}): StateTransition[] {
    return this.#transitions.select(query);
  }

  #record(key: string, mutation: StateMutation, by: ChangeAttribution): StateTransition {
    const version = this.version(key) + 1;
    this.values.setVersion(key, version);
    return this.#transitions.record(key, mutation, version, by);
  }
}
