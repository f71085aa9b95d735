/**
 * The synchronous face of the shared PostgreSQL state: a per-runtime cache
 * of every key's value and version, which is what the engine's hot path
 * (preconditions, policies, `state_read`, the read versions it records)
 * sees.
 *
 * Consistency model: the cache is the database as of the runtime's last
 * refresh (at every `beginProposal`) plus this runtime's own commits. It may
 * lag other runtimes' commits; that is safe because every version a
 * proposal recorded (its reads, its assumptions, the versions its writes
 * build on) is re-checked under row locks in the commit transaction — a
 * stale view can make a proposal abort, never lose an update.
 *
 * Direct writes (`set` / `delete` / `restore` outside a proposal) apply to
 * the cache at once and reach the database shortly after, last writer wins;
 * `flush()` on the store waits for them.
 */
import { cloneJson, emptyMap, jsonEquals, rfc3339, setOwn } from "@car/ir";
import type { Clock, JsonValue, StateMutation } from "@car/ir";
import { DIRECT_WRITE } from "../../store/state-store.ts";
import type { ChangeAttribution, StateEntry, StateStore, StateTransition, TransitionQuery } from "../../store/state-store.ts";

/** One key as the database holds it. */
export interface StoredKey {
  key: string;
  /** Undefined: absent (deleted, or never written). */
  value: JsonValue | undefined;
  version: number;
}

/** A write made outside any proposal, waiting to reach the database. */
export interface DirectWrite {
  key: string;
  mutation: StateMutation;
}

const DELETE: StateMutation = Object.freeze({ op: "delete" }) as StateMutation;

export class StateCache implements StateStore {
  /** Present keys only, in the order they (re)appeared. */
  readonly #values = new Map<string, JsonValue>();
  readonly #versions = new Map<string, number>();
  readonly #transitions: StateTransition[] = [];
  readonly #clock: Clock;
  readonly #onDirectWrite: (write: DirectWrite) => void;

  constructor(clock: Clock, onDirectWrite: (write: DirectWrite) => void) {
    this.#clock = clock;
    this.#onDirectWrite = onDirectWrite;
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
    const mutation: StateMutation = { op: "set", value: cloneJson(stored) };
    this.#onDirectWrite({ key, mutation });
    return this.#record(key, mutation, by, this.version(key) + 1);
  }

  delete(key: string, by: ChangeAttribution = DIRECT_WRITE): StateTransition | null {
    if (!this.#values.delete(key)) return null;
    this.#onDirectWrite({ key, mutation: DELETE });
    return this.#record(key, DELETE, by, this.version(key) + 1);
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

  /** Takes a row read from the database if it is newer than what the cache holds (versions only grow). */
  absorb(row: StoredKey): void {
    if (row.version <= this.version(row.key)) return;
    this.#versions.set(row.key, row.version);
    if (row.value === undefined) this.#values.delete(row.key);
    else this.#values.set(row.key, row.value);
  }

  /** Records a proposal's committed write, at the version the database gave it. */
  applyCommitted(key: string, mutation: StateMutation, version: number, by: ChangeAttribution): StateTransition {
    // A refresh may already hold a later version of the key (another runtime wrote it since): keep that.
    if (version >= this.version(key)) {
      if (mutation.op === "set") this.#values.set(key, cloneJson(mutation.value));
      else this.#values.delete(key);
    }
    return this.#record(key, mutation, by, version);
  }

  #record(key: string, mutation: StateMutation, by: ChangeAttribution, version: number): StateTransition {
    if (version > this.version(key)) this.#versions.set(key, version);
    const transition: StateTransition = {
      key,
      mutation,
      previous_version: version - 1,
      version,
      proposal_id: by.proposal_id,
      action_id: by.action_id,
      timestamp: rfc3339(this.#clock.now()),
    };
    this.#transitions.push(transition);
    return transition;
  }
}
