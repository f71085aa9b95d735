/**
 * A proposal's private view of state: reads fall through to the base store,
 * writes land in an overlay and in an ordered list of pending mutations. The
 * base store is untouched until the proposal commits, so aborting is simply
 * dropping this object — no snapshot copy, no undo — and two proposals
 * running at once never see each other's uncommitted writes.
 */
import { cloneJson } from "@car/ir";
import type { JsonValue, StateMutation } from "@car/ir";
import type { StateStore } from "./state-store.ts";

/** One write a proposal made, in the order it made it. */
export interface PendingMutation {
  key: string;
  mutation: StateMutation;
  action_id: string;
}

/** A key the proposal read from the base store, and the version it saw then. */
export interface ReadRecord {
  key: string;
  version: number;
  action_id: string;
}

const ABSENT = Symbol("absent");

export class WorkingState {
  readonly base: StateStore;
  readonly #overlay = new Map<string, JsonValue | typeof ABSENT>();
  readonly mutations: PendingMutation[] = [];
  readonly reads: ReadRecord[] = [];

  constructor(base: StateStore) {
    this.base = base;
  }

  get(key: string): JsonValue | undefined {
    const own = this.#overlay.get(key);
    if (own === ABSENT) return undefined;
    if (own !== undefined) return cloneJson(own);
    return this.base.get(key);
  }

  exists(key: string): boolean {
    const own = this.#overlay.get(key);
    if (own !== undefined) return own !== ABSENT;
    return this.base.exists(key);
  }

  /**
   * Records that `action_id` read `key`: the version it saw, for optimistic
   * checks at commit. A key this proposal already wrote is its own data, not
   * a read of shared state, and is not recorded.
   */
  noteRead(key: string, action_id: string): void {
    if (this.#overlay.has(key)) return;
    this.reads.push({ key, version: this.base.version(key), action_id });
  }

  set(key: string, value: JsonValue, action_id: string): StateMutation {
    const stored = cloneJson(value);
    this.#overlay.set(key, stored);
    const mutation: StateMutation = { op: "set", value: stored };
    this.mutations.push({ key, mutation, action_id });
    return mutation;
  }

  delete(key: string, action_id: string): StateMutation | undefined {
    if (!this.exists(key)) return undefined;
    this.#overlay.set(key, ABSENT);
    const mutation: StateMutation = { op: "delete" };
    this.mutations.push({ key, mutation, action_id });
    return mutation;
  }
}
