/**
 * The CLI's durable store: a SQLite database, `--db PATH` or
 * `<CAR_HOME>/car.db` by default (or PostgreSQL for a `postgres://` URL),
 * with the audit key in `<CAR_HOME>/audit.key` (apart from the database, so
 * someone who can only edit the database can neither forge event MACs nor
 * checkpoints). `car run`, `car serve`,
 * `car audit` and `car approvals` all open it here, so they agree on both.
 * The SQLite module is loaded only by the commands that use it.
 */
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { CarError } from "@car/ir";
import type { CarEvent, EventQuery, RuntimeStore } from "@car/engine";
import type { SqliteStore } from "@car/store-sqlite";
import type { PostgresStore } from "@car/store-postgres";
import { resolveCarHome } from "./car-home.ts";

export const DATABASE_FILE = "car.db";
export const AUDIT_KEY_FILE = "audit.key";
/** Where `car audit anchor` writes the chain head down by default, and `car audit verify` reads it. */
export const ANCHOR_FILE = "anchors.jsonl";

export function auditKeyPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(resolveCarHome(env), AUDIT_KEY_FILE);
}

/** `--db` as given (`:memory:` keeps nothing), else `<CAR_HOME>/car.db`. */
export function databasePath(option: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (option === ":memory:") return option;
  return option !== undefined ? resolve(option) : join(resolveCarHome(env), DATABASE_FILE);
}

export interface OpenCarDatabaseOptions {
  /** Open an existing database for reading only; a missing file is an `invalid_params` error. */
  readonly?: boolean;
  env?: NodeJS.ProcessEnv;
}

/** Opens (creating when writable and missing) the CLI's SQLite store at `path`. */
export async function openCarDatabase(path: string, options: OpenCarDatabaseOptions = {}): Promise<SqliteStore> {
  const env = options.env ?? process.env;
  if (path !== ":memory:") {
    if (options.readonly === true && !existsSync(path)) throw new CarError("invalid_params", `no CAR database at '${path}' (pass --db PATH)`);
    mkdirSync(dirname(path), { recursive: true });
  }
  const { sqlite } = await import("@car/store-sqlite");
  try {
    return sqlite(path, { auditKeyFile: auditKeyPath(env), ...(options.readonly === true ? { readonly: true } : {}) });
  } catch (error) {
    throw databaseError(error, path);
  }
}

/** SQLite's own codes for a file that is not (or no longer) a readable database. */
const DAMAGED = new Set(["SQLITE_CORRUPT", "SQLITE_NOTADB"]);

/**
 * SQLite's raw failures ("database disk image is malformed", "file is not a
 * database", a locked or read-only file) as a `storage_error` that names the
 * file and says what to do; anything else passes through unchanged.
 */
export function databaseError(error: unknown, path: string): unknown {
  // The engine wraps SQLite's error (as `cause`) in its own `storage_error`; the code is on the original.
  const raw = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = (raw as { code?: unknown } | null)?.code;
  const reason = raw instanceof Error ? raw.message : String(raw);
  if (typeof code === "string" && DAMAGED.has(code)) {
    return new CarError(
      "storage_error",
      `the CAR database '${path}' is damaged or not a CAR database (${reason}): move it aside and run again to start a new one, or pass --db with another file`,
      { path, sqlite_code: code },
      { cause: error },
    );
  }
  if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") {
    return new CarError(
      "storage_error",
      `the CAR database '${path}' is locked by another process (${reason}): wait for it to finish, or pass --db with another file`,
      { path, sqlite_code: code },
      { cause: error },
    );
  }
  if (code === "SQLITE_READONLY" || code === "SQLITE_CANTOPEN") {
    return new CarError(
      "storage_error",
      `cannot open the CAR database '${path}' for writing (${reason}): check the file's permissions, or pass --db with another file`,
      { path, sqlite_code: code },
      { cause: error },
    );
  }
  return error;
}

/** A `--db` value naming a PostgreSQL database (shared by runtimes on several hosts) rather than a SQLite file. */
const POSTGRES_URL = /^postgres(ql)?:\/\//i;

export function isPostgresUrl(option: string | undefined): option is string {
  return option !== undefined && POSTGRES_URL.test(option);
}

/** Opens the PostgreSQL store at `url` with the CLI's audit key, surfacing connection errors now. */
export async function openPostgres(url: string, options: { readonlyKey?: boolean; env?: NodeJS.ProcessEnv } = {}): Promise<PostgresStore> {
  const { postgres } = await import("@car/store-postgres");
  const store = postgres(url, { auditKeyFile: auditKeyPath(options.env), ...(options.readonlyKey === true ? { readonlyKey: true } : {}) });
  try {
    await store.ready();
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}

/** A store's event log; a shared (PostgreSQL) one also answers from the database itself (`queryShared`). */
export interface StoredEventLog {
  query(filter: EventQuery): CarEvent[];
  queryShared?(filter: EventQuery): Promise<CarEvent[]>;
}

/** The events as the database holds them: read from the database where the log is shared, as a runtime's local copy may lag. */
export async function storedEvents(log: StoredEventLog, filter: EventQuery): Promise<CarEvent[]> {
  return log.queryShared !== undefined ? log.queryShared(filter) : log.query(filter);
}

/**
 * The store `car run` / `car serve` execute on: PostgreSQL for a
 * `postgres://` `--db` (the `pg` client loaded only then), else the SQLite
 * database above.
 */
export async function openRuntimeStore(option: string | undefined, env: NodeJS.ProcessEnv = process.env): Promise<RuntimeStore> {
  if (!isPostgresUrl(option)) return openCarDatabase(databasePath(option, env), { env });
  return openPostgres(option, { env });
}
