/**
 * The durable store `car serve` runs on, shared by every session: SQLite by
 * default (`$CAR_HOME/car.db`), a `postgres://` URL for PostgreSQL, or none
 * for `--db :memory:` (each session then keeps its own in-memory runtime, as
 * a library `startServer()` does). Opened and recovered once at start,
 * closed once at shutdown, after in-flight proposals.
 */
import { CarError } from "@car/ir";
import { type AuditedRuntimeStore, isAuditedStore } from "@car/engine";
import { openRuntimeStore } from "./car-database.ts";

/** What the server's durable methods need from a store: @car/engine's contract, which both backends offer (cuts of the log included: retention, truncate, clear). */
export type ServeStore = AuditedRuntimeStore;

/**
 * The single place `--db` becomes a store: `undefined` for `:memory:`, else
 * the CLI's runtime store (SQLite file or PostgreSQL) with interrupted
 * proposals recovered (their state restored, marked interrupted in the log).
 */
export async function openServeStore(option: string | undefined, env: NodeJS.ProcessEnv): Promise<ServeStore | undefined> {
  if (option === ":memory:") return undefined;
  const store = await openRuntimeStore(option, env);
  try {
    if (!isAuditedStore(store)) throw new CarError("storage_error", "this store has no posture table or hash chain; car serve needs both");
    await store.recover?.();
    return store;
  } catch (error) {
    await store.close?.();
    throw error;
  }
}

/** The store a durable method works on, or a `storage_error` naming why there is none. */
export function requireStore(store: ServeStore | undefined, method: string): ServeStore {
  if (store === undefined) throw new CarError("storage_error", `${method} needs a database; this server runs with --db :memory:`);
  return store;
}
