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
import { CachedStateStore, TransitionLog } from "@car/engine/durable";
import { cloneJson } from "@car/ir";
import type { Clock, JsonValue, StateMutation } from "@car/ir";
import { type ChangeAttribution, DIRECT_WRITE, type StateTransition, type TransitionQuery } from "@car/engine";

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

export class StateCache extends CachedStateStore {
  /** Present keys only, in the order they (re)appeared. */
  readonly #transitions: TransitionLog;
  readonly #onDirectWrite: (write: DirectWrite) => void;

  constructor(clock: Clock, onDirectWrite: (write: DirectWrite) => void) {
    super();
    this.#transitions = new TransitionLog(clock);
    this.#onDirectWrite = onDirectWrite;
  }

  set(key: string, value: JsonValue, by: ChangeAttribution = DIRECT_WRITE): StateTransition {
    const stored = cloneJson(value);
    this.values.put(key, stored);
    const mutation: StateMutation = { op: "set", value: cloneJson(stored) };
    this.#onDirectWrite({ key, mutation });
    return this.#record(key, mutation, by, this.version(key) + 1);
  }

  delete(key: string, by: ChangeAttribution = DIRECT_WRITE): StateTransition | null {
    if (!this.values.remove(key)) return null;
    this.#onDirectWrite({ key, mutation: DELETE });
    return this.#record(key, DELETE, by, this.version(key) + 1);
  }

  restore(snapshot: Readonly<Record<string, JsonValue>>, by: ChangeAttribution = DIRECT_WRITE): StateTransition[] {
    const { removed, changed } = this.values.diff(snapshot);
    return [...removed.map((key) => this.delete(key, by)!), ...changed.map(([key, value]) => this.set(key, value, by))];
  }

  transitions(query: TransitionQuery = {}): StateTransition[] {
    return this.#transitions.select(query);
  }

  /** Takes a row read from the database if it is newer than what the cache holds (versions only grow). */
  absorb(row: StoredKey): void {
    if (row.version <= this.version(row.key)) return;
    this.values.setVersion(row.key, row.version);
    if (row.value === undefined) this.values.remove(row.key);
    else this.values.put(row.key, row.value);
  }

  /** Records a proposal's committed write, at the version the database gave it. */
  applyCommitted(key: string, mutation: StateMutation, version: number, by: ChangeAttribution): StateTransition {
    // A refresh may already hold a later version of the key (another runtime wrote it since): keep that.
    if (version >= this.version(key)) {
      if (mutation.op === "set") this.values.put(key, cloneJson(mutation.value));
      else this.values.remove(key);
    }
    return this.#record(key, mutation, by, version);
  }

  #record(key: string, mutation: StateMutation, by: ChangeAttribution, version: number): StateTransition {
    if (version > this.version(key)) this.values.setVersion(key, version);
    return this.#transitions.record(key, mutation, version, by);
  }
}
