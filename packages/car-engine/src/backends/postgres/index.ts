/**
 * `@car/engine/postgres`: the PostgreSQL backend, for runtimes in several
 * processes or hosts that share one state, one audit log and one approval
 * ledger. A separate entry point so the main package never loads `pg`.
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
export type { Anchor } from "../shared/anchor.ts";
