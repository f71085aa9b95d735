/**
 * The state seam. A `StateStore` is the runtime's key/value state: every key
 * carries a version that increases by exactly one on each write (a delete is
 * a write: the version survives it, so a re-created key never repeats a
 * version an optimistic reader saw), and every change is recorded with the
 * proposal and action that made it.
 *
 * The interface is synchronous on purpose: the engine evaluates
 * preconditions, policies and `state_read`s on its hot path. A durable
 * backend keeps a synchronous view (its cache) here and does its I/O in the
 * `RuntimeStore` transaction hooks (`beginProposal` / `commitProposal`).
 */
import type { JsonValue, StateMutation } from "@car/ir";

/** Who made a change. Both ids are null for a direct write (not from a proposal). */
export interface ChangeAttribution {
  proposal_id: string | null;
  action_id: string | null;
}

export const DIRECT_WRITE: ChangeAttribution = Object.freeze({ proposal_id: null, action_id: null });

/** One key's current value and version. */
export interface StateEntry {
  key: string;
  value: JsonValue;
  version: number;
}

/** One recorded change: plain JSON data, so a durable backend can store it as it is. */
export interface StateTransition extends ChangeAttribution {
  key: string;
  mutation: StateMutation;
  /** The key's version before the change (0: never written). */
  previous_version: number;
  /** The key's version after the change: `previous_version + 1`. */
  version: number;
  /** RFC 3339. */
  timestamp: string;
}

export interface TransitionQuery {
  key?: string;
  proposal_id?: string;
  action_id?: string;
}

export interface StateStore {
  /** The value, or `undefined` when the key is absent. */
  get(key: string): JsonValue | undefined;
  exists(key: string): boolean;
  /** The key's current version; 0 when it has never been written. A deleted key keeps its version. */
  version(key: string): number;
  /** Present keys, in first-write order. */
  keys(): string[];
  /** Present keys with values and versions. */
  entries(): StateEntry[];
  /** A prototype-free copy of every present key's value. */
  snapshot(): Record<string, JsonValue>;
  set(key: string, value: JsonValue, by?: ChangeAttribution): StateTransition;
  /** Removes the key; `null` (and no version bump) when it was absent. */
  delete(key: string, by?: ChangeAttribution): StateTransition | null;
  /**
   * Makes the state equal to `snapshot`: keys not in it are deleted, keys
   * whose value differs are set. Each change is an ordinary versioned write.
   */
  restore(snapshot: Readonly<Record<string, JsonValue>>, by?: ChangeAttribution): StateTransition[];
  /** Recorded changes, oldest first, optionally filtered. */
  transitions(query?: TransitionQuery): StateTransition[];
}
