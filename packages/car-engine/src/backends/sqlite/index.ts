/**
 * `@car/engine/sqlite`: the durable, tamper-evident store. A separate entry
 * so that only users who ask for SQLite load the native `better-sqlite3`
 * module (an optional dependency of @car/engine).
 */
export { sqlite, SqliteStore, type SqliteStoreOptions, type VerifyOptions } from "./sqlite-store.ts";
export { type Anchor, appendAnchor, readAnchors } from "../shared/anchor.ts";
export { SCHEMA_VERSION } from "./schema.ts";
// The durable-store contract (postures, ledger, retention, chain report) is exported by `@car/engine` itself.
export type { Checkpoint, SignedCheckpoint } from "../shared/checkpoint.ts";
export { firstStateDifference, replayStateChanges } from "../shared/state-replay.ts";
export { GENESIS_HASH } from "../shared/event-hash.ts";
