/**
 * Rows a read has verified (seal and currency, row-currency.ts), kept while
 * the database has not changed since: the gate asks the approval ledger
 * once per gated action, and the currency read costs far more than the
 * check that nothing changed. SQLite's `data_version` moves when another
 * connection (another process, a hand edit) commits, `total_changes()`
 * when this one writes — a write later rolled back included — so any write
 * at all empties the cache. Never used inside a transaction, whose reads
 * may see its own uncommitted writes.
 */
import type { Statement } from "better-sqlite3";
import type { SqliteDatabase } from "./schema.ts";

/** Past this many keys the cache starts over, so a stream of distinct keys cannot grow it. */
const MAX_KEYS = 1024;

export class VerifiedRowsCache<T> {
  readonly #db: SqliteDatabase;
  readonly #stamp: Statement;
  readonly #rows = new Map<string, readonly T[]>();
  #generation: string | undefined;

  constructor(db: SqliteDatabase) {
    this.#db = db;
    this.#stamp = db.prepare("SELECT total_changes(), data_version FROM pragma_data_version").raw();
  }

  /** The rows of `key`: cached while the database is unchanged, else `load()` (which verifies them). */
  read(key: string, load: () => T[]): readonly T[] {
    if (this.#db.inTransaction) return load();
    const [changes, version] = this.#stamp.get() as [number, number];
    const generation = `${changes}:${version}`;
    if (generation !== this.#generation || this.#rows.size >= MAX_KEYS) {
      this.#rows.clear();
      this.#generation = generation;
    }
    let rows = this.#rows.get(key);
    if (rows === undefined) {
      rows = Object.freeze(load().map((row) => Object.freeze(row)));
      this.#rows.set(key, rows);
    }
    return rows;
  }
}
