/**
 * Opening a CAR database: WAL mode, a busy timeout so a second process (the
 * `car audit` / `car approvals` commands beside a running server) waits
 * instead of failing, and versioned migrations applied in one transaction.
 */
import Database from "better-sqlite3";
import { CarError } from "@car/ir";
import { migrateToLeanEvents } from "./lean-events-migration.ts";
import { APPROVAL_EVENTS_INDEX, POSTURE_EVENTS_INDEX } from "./row-currency-sql.ts";

export type SqliteDatabase = Database.Database;

/**
 * Migrations, in order; index + 1 is the schema version they produce. Never
 * edit a shipped one: append. SQL, or a function for a rewrite SQL cannot
 * express; all run in one transaction.
 */
export const MIGRATIONS: readonly (string | ((db: SqliteDatabase) => void))[] = [
  `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
   CREATE TABLE chain_head (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL, hash TEXT NOT NULL) STRICT;
   CREATE TABLE events (
     seq INTEGER PRIMARY KEY,
     kind TEXT NOT NULL,
     proposal_id TEXT,
     action_id TEXT,
     ts INTEGER NOT NULL,
     body TEXT NOT NULL,
     hash TEXT NOT NULL
   ) STRICT;
   CREATE INDEX events_by_proposal ON events (proposal_id, seq);
   CREATE INDEX events_by_time ON events (ts);
   CREATE TABLE checkpoints (id INTEGER PRIMARY KEY, body TEXT NOT NULL, signature TEXT NOT NULL) STRICT;
   CREATE TABLE state (key TEXT PRIMARY KEY, value TEXT, version INTEGER NOT NULL, ord INTEGER) STRICT;
   CREATE TABLE transitions (
     id INTEGER PRIMARY KEY,
     key TEXT NOT NULL,
     mutation TEXT NOT NULL,
     previous_version INTEGER NOT NULL,
     version INTEGER NOT NULL,
     proposal_id TEXT,
     action_id TEXT,
     timestamp TEXT NOT NULL
   ) STRICT;
   CREATE TABLE proposals (
     run INTEGER PRIMARY KEY,
     proposal_id TEXT NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('executing', 'committed', 'rolled_back', 'rejected', 'interrupted')),
     began_at TEXT NOT NULL,
     ended_at TEXT,
     owner_pid INTEGER NOT NULL,
     owner TEXT NOT NULL
   ) STRICT;
   CREATE INDEX proposals_executing ON proposals (status) WHERE status = 'executing';
   CREATE TABLE approvals (
     id INTEGER PRIMARY KEY,
     fingerprint TEXT NOT NULL,
     decision TEXT NOT NULL CHECK (decision IN ('approved', 'rejected')),
     decided_at INTEGER NOT NULL,
     expires_at INTEGER,
     record TEXT NOT NULL
   ) STRICT;
   CREATE INDEX approvals_by_fingerprint ON approvals (fingerprint, id);
   CREATE TABLE revocations (approval_id INTEGER PRIMARY KEY REFERENCES approvals (id), revoked_at INTEGER NOT NULL, revoked_by TEXT NOT NULL) STRICT;
   CREATE TABLE postures (
     agent_id TEXT NOT NULL,
     tier TEXT NOT NULL CHECK (tier IN ('*', 'read_only', 'sandbox_edit', 'full_access')),
     posture TEXT NOT NULL CHECK (posture IN ('always_allow', 'require_approval', 'deny')),
     updated_at INTEGER NOT NULL,
     PRIMARY KEY (agent_id, tier)
   ) STRICT;`,
  // The chain's key: each event's HMAC under the audit key kept outside the database (event-mac.ts).
  `ALTER TABLE events ADD COLUMN mac TEXT;`,
  // The lean event row (event-row.ts): no repeated envelope or prev_hash, hashes as BLOBs.
  migrateToLeanEvents,
  // Row seals (row-seal.ts): approvals and postures are refused at run time when edited outside CAR.
  `ALTER TABLE approvals ADD COLUMN seal TEXT;
   ALTER TABLE postures ADD COLUMN seal TEXT;`,
  // Agent run traces (runs.*): one row per run, its records in order.
  `CREATE TABLE runs (
     run_id TEXT PRIMARY KEY,
     agent_id TEXT NOT NULL,
     intent TEXT NOT NULL,
     started_at TEXT NOT NULL,
     ended_at TEXT,
     status TEXT NOT NULL CHECK (status IN ('in_progress', 'completed', 'incomplete', 'cancelled')),
     turn_count INTEGER NOT NULL,
     record_count INTEGER NOT NULL
   ) STRICT;
   CREATE INDEX runs_by_agent ON runs (agent_id, started_at);
   CREATE TABLE run_records (
     run_id TEXT NOT NULL REFERENCES runs (run_id),
     seq INTEGER NOT NULL,
     body TEXT NOT NULL,
     PRIMARY KEY (run_id, seq)
   ) STRICT;`,
  // Row currency (row-currency.ts): each run-time read of approvals or postures finds the newest chained event about them.
  `${APPROVAL_EVENTS_INDEX};
   ${POSTURE_EVENTS_INDEX};`,
  // Run identity (DECISIONS §20): each proposals row names its run, which recovery finds the run's dispatch intents by.
  // Rows written before it keep a NULL run_id (recovery reads those by time, as it did).
  `ALTER TABLE proposals ADD COLUMN run_id TEXT;`,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

export interface OpenOptions {
  /** `full` (default): every commit is on disk when it returns, power loss included. `normal`: survives a process crash, may lose the last commits on power loss; faster. */
  synchronous?: "full" | "normal";
  /** Open an existing database for reading only (verification, queries). */
  readonly?: boolean;
}

export function openDatabase(path: string, options: OpenOptions = {}): SqliteDatabase {
  let db: SqliteDatabase;
  try {
    db = new Database(path, { readonly: options.readonly === true, fileMustExist: options.readonly === true });
  } catch (error) {
    throw new CarError("storage_error", `cannot open the database '${path}': ${(error as Error).message}`, {}, { cause: error });
  }
  try {
    db.pragma("busy_timeout = 5000");
    if (options.readonly !== true) {
      db.pragma("journal_mode = WAL");
      db.pragma(`synchronous = ${options.synchronous === "normal" ? "NORMAL" : "FULL"}`);
      db.pragma("foreign_keys = ON");
      migrate(db);
    } else if (userVersion(db) !== SCHEMA_VERSION) {
      throw new CarError("storage_error", `the database '${path}' has schema version ${userVersion(db)}, this build reads ${SCHEMA_VERSION}`);
    }
    return db;
  } catch (error) {
    db.close();
    if (error instanceof CarError) throw error;
    throw new CarError("storage_error", `cannot prepare the database '${path}': ${(error as Error).message}`, {}, { cause: error });
  }
}

/** Runs `fn` in an IMMEDIATE transaction (a savepoint when one is open). */
export type ImmediateRunner = <T>(fn: () => T) => T;

/**
 * One reusable IMMEDIATE-transaction wrapper for `db`. better-sqlite3's
 * `transaction()` builds four wrapper functions per call, which costs more
 * than a small proposal's inserts; the store and its log each build this
 * once instead.
 */
export function immediateRunner(db: SqliteDatabase): ImmediateRunner {
  return db.transaction((fn: () => unknown) => fn()).immediate as ImmediateRunner;
}

/**
 * Runs `fn` — which opens its own write transaction — with the connection
 * at `synchronous = NORMAL`, so that transaction reaches the WAL without a
 * sync, for a caller that syncs it itself (wal-group-sync.ts). The setting
 * changes only between transactions: inside an open one `fn` runs as is.
 */
export function relaxedRunner(db: SqliteDatabase): ImmediateRunner {
  const normal = db.prepare("PRAGMA synchronous = NORMAL");
  const full = db.prepare("PRAGMA synchronous = FULL");
  return <T>(fn: () => T): T => {
    if (db.inTransaction) return fn();
    normal.run();
    try {
      return fn();
    } finally {
      full.run();
    }
  };
}

function userVersion(db: SqliteDatabase): number {
  return db.pragma("user_version", { simple: true }) as number;
}

function migrate(db: SqliteDatabase): void {
  db.transaction(() => {
    const current = userVersion(db);
    if (current > SCHEMA_VERSION) throw new CarError("storage_error", `the database has schema version ${current}, newer than this build (${SCHEMA_VERSION})`);
    for (let v = current; v < SCHEMA_VERSION; v++) {
      const step = MIGRATIONS[v]!;
      if (typeof step === "string") db.exec(step);
      else step(db);
    }
    if (current !== SCHEMA_VERSION) db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}
