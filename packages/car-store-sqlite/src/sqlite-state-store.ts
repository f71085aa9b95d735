/**
 * State in SQLite behind a synchronous cache. Reads never touch the database
 * (the engine reads on its hot path); every write goes to the cache and, in
 * the same call, to the `state` and `transitions` tables — inside the
 * caller's transaction when there is one (a proposal commit), else in its own.
 * When a transaction fails the cache is reloaded from the database, so the
 * two never disagree for longer than the failing call. A direct write (no
 * proposal) is handed to the store's `recordDirect`, which appends its
 * chained `state_changed` event in the same transaction.
 */
import { CachedStateStore, VersionedValues } from "@car/engine/durable";
import { cloneJson, emptyMap, rfc3339, setOwn } from "@car/ir";
import type { Clock, JsonValue, StateMutation } from "@car/ir";
import { type ChangeAttribution, DIRECT_WRITE, type StateTransition, type TransitionQuery } from "@car/engine";
import type { SqliteDatabase } from "./schema.ts";

const DELETE: StateMutation = Object.freeze({ op: "delete" }) as StateMutation;

interface StateRow {
  key: string;
  value: string | null;
  version: number;
}

export interface TransitionRow {
  key: string;
  mutation: string;
  previous_version: number;
  version: number;
  proposal_id: string | null;
  action_id: string | null;
  timestamp: string;
}

/** What the owning store provides: its write transaction, and the audit record of a direct write. */
export interface StateStoreHooks {
  /** Runs `fn` in a write transaction that first catches up with other connections' commits. */
  transact<T>(fn: () => T): T;
  /** Records a write made outside any proposal (appends its chained event, inside the current transaction). */
  recordDirect(transition: StateTransition): void;
}

export class SqliteStateStore extends CachedStateStore {
  readonly #db: SqliteDatabase;
  readonly #clock: Clock;
  readonly #hooks: StateStoreHooks;
  /** Present keys in first-write order (Map order), as the in-memory store keeps them. */
  #nextOrd = 1;
  readonly #upsert;
  readonly #update;
  readonly #insertTransition;

  constructor(db: SqliteDatabase, clock: Clock, hooks: StateStoreHooks) {
    super();
    this.#db = db;
    this.#clock = clock;
    this.#hooks = hooks;
    this.#upsert = db.prepare(
      "INSERT INTO state (key, value, version, ord) VALUES (?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, version = excluded.version, ord = excluded.ord",
    );
    this.#update = db.prepare("UPDATE state SET value = ?, version = ? WHERE key = ?");
    this.#insertTransition = db.prepare(
      "INSERT INTO transitions (key, mutation, previous_version, version, proposal_id, action_id, timestamp) VALUES (?, ?, ?, ?, ?, ?, ?)",
    );
    this.reload();
  }

  /** Re-reads the cache from the database (after a failed transaction, or another process's commit). */
  reload(): void {
    const state = new VersionedValues();
    let maxOrd = 0;
    for (const row of this.#db.prepare("SELECT key, value, version, ord FROM state ORDER BY ord IS NULL, ord").iterate() as IterableIterator<
      StateRow & { ord: number | null }
    >) {
      state.setVersion(row.key, row.version);
      if (row.value !== null) state.put(row.key, cloneJson(JSON.parse(row.value) as JsonValue));
      if (row.ord !== null && row.ord > maxOrd) maxOrd = row.ord;
    }
    this.values = state;
    this.#nextOrd = maxOrd + 1;
  }

  /** Every present key's value as the `state` table holds it now (not the cache): what verification compares with the log. */
  storedSnapshot(): Record<string, JsonValue> {
    const out = emptyMap();
    for (const row of this.#db.prepare("SELECT key, value FROM state WHERE value IS NOT NULL").iterate() as IterableIterator<{ key: string; value: string }>) {
      setOwn(out, row.key, JSON.parse(row.value) as JsonValue);
    }
    return out;
  }

  /** Versions of `keys` as the cache has them now. */
  versionsOf(keys: Iterable<string>): Map<string, number> {
    const out = new Map<string, number>();
    for (const key of keys) out.set(key, this.version(key));
    return out;
  }

  set(key: string, value: JsonValue, by: ChangeAttribution = DIRECT_WRITE): StateTransition {
    return this.#write(() => this.#set(key, value, by));
  }

  delete(key: string, by: ChangeAttribution = DIRECT_WRITE): StateTransition | null {
    return this.#write(() => this.#delete(key, by));
  }

  restore(snapshot: Readonly<Record<string, JsonValue>>, by: ChangeAttribution = DIRECT_WRITE): StateTransition[] {
    return this.#write(() => {
      const { removed, changed } = this.values.diff(snapshot);
      return [...removed.map((key) => this.#delete(key, by)!), ...changed.map(([key, value]) => this.#set(key, value, by))];
    });
  }

  transitions(query: TransitionQuery = {}): StateTransition[] {
    const where: string[] = [];
    const params: string[] = [];
    if (query.key !== undefined) where.push("key = ?"), params.push(query.key);
    if (query.proposal_id !== undefined) where.push("proposal_id = ?"), params.push(query.proposal_id);
    if (query.action_id !== undefined) where.push("action_id = ?"), params.push(query.action_id);
    const sql = `SELECT key, mutation, previous_version, version, proposal_id, action_id, timestamp FROM transitions${where.length > 0 ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY id`;
    return (this.#db.prepare(sql).all(...params) as TransitionRow[]).map((row) => ({
      key: row.key,
      mutation: cloneJson(JSON.parse(row.mutation) as JsonValue) as unknown as StateMutation,
      previous_version: row.previous_version,
      version: row.version,
      proposal_id: row.proposal_id,
      action_id: row.action_id,
      timestamp: row.timestamp,
    }));
  }

  /**
   * Runs a write: inside the caller's transaction (a proposal commit, which
   * has synced already), or in the store's own one, which first catches up
   * with other connections' commits so a version is never computed from a
   * stale cache. On failure the cache is reloaded.
   */
  #write<T>(fn: () => T): T {
    if (this.#db.inTransaction) return fn();
    try {
      return this.#hooks.transact(fn);
    } catch (error) {
      this.reload();
      throw error;
    }
  }

  #set(key: string, value: JsonValue, by: ChangeAttribution): StateTransition {
    const stored = cloneJson(value);
    const text = JSON.stringify(stored);
    const ord = this.values.exists(key) ? undefined : this.#nextOrd++;
    this.values.put(key, stored);
    return this.#record(key, { op: "set", value: cloneJson(stored) }, text, ord, by);
  }

  #delete(key: string, by: ChangeAttribution): StateTransition | null {
    if (!this.values.remove(key)) return null;
    return this.#record(key, DELETE, null, null, by);
  }

  /** `ord`: a new first-write position, `null` for a deleted key, undefined to keep the current one. */
  #record(key: string, mutation: StateMutation, text: string | null, ord: number | null | undefined, by: ChangeAttribution): StateTransition {
    const previous = this.version(key);
    const version = previous + 1;
    this.values.setVersion(key, version);
    const timestamp = rfc3339(this.#clock.now());
    if (ord === undefined) this.#update.run(text, version, key);
    else this.#upsert.run(key, text, version, ord);
    this.#insertTransition.run(key, JSON.stringify(mutation), previous, version, by.proposal_id, by.action_id, timestamp);
    const transition = { key, mutation, previous_version: previous, version, proposal_id: by.proposal_id, action_id: by.action_id, timestamp };
    if (by.proposal_id === null) this.#hooks.recordDirect(transition);
    return transition;
  }
}
