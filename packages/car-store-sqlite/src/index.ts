/**
 * `@car/store-sqlite`: the durable, tamper-evident `RuntimeStore` on one
 * SQLite file. Its own package so that only users who persist on SQLite
 * install the native `better-sqlite3` module; `@car/engine` has no native
 * dependency.
 */
export { sqlite, SqliteStore, type SqliteStoreOptions, type VerifyOptions } from "./sqlite-store.ts";
export { SCHEMA_VERSION } from "./schema.ts";
// The durable-store contract (postures, ledger, retention, chain report) is exported by `@car/engine` itself;
// these are re-exported for `car audit` and for users of the file's anchors and replay.
export {
  type Anchor,
  appendAnchor,
  type Checkpoint,
  firstStateDifference,
  GENESIS_HASH,
  readAnchors,
  replayStateChanges,
  type SignedCheckpoint,
} from "@car/engine/durable";
