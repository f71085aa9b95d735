/**
 * `@car/store-postgres`: the PostgreSQL `RuntimeStore`, for runtimes in
 * several processes or hosts that share one state, one audit log and one
 * approval ledger. Its own package so that only users who persist on
 * PostgreSQL install `pg`; `@car/engine` has no database dependency.
 */
import { PostgresStore } from "./postgres-store.ts";
import type { PostgresStoreOptions } from "./postgres-store.ts";

/**
 * A `RuntimeStore` on the PostgreSQL database at `url`
 * (`postgres://user@host:port/db`): `new Runtime({ store: postgres(url) })`.
 * It connects and migrates in the background; `await store.ready()` to
 * surface connection errors early (every store operation waits for it).
 */
export function postgres(url: string, options: PostgresStoreOptions = {}): PostgresStore {
  return new PostgresStore(url, options);
}

export { PostgresStore, TRANSACTION_WARNING, type PostgresStoreOptions } from "./postgres-store.ts";
export { PostgresEventLog } from "./event-log.ts";
export { PostgresApprovalLedger } from "./approval-ledger.ts";
export { PostgresPostureStore } from "./posture-store.ts";
export { MIGRATIONS, SCHEMA_VERSION } from "./migrations.ts";
export type { Anchor } from "@car/engine/durable";
export { PostgresOversight } from "./postgres-oversight.ts";
