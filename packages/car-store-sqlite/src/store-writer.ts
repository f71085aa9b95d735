/**
 * What the ledger and posture store need from the bundle that owns them: one
 * write transaction (events and rows together, the cache repaired when it
 * fails) and an audit append into the chained log.
 */
import type { JsonObject } from "@car/ir";

export interface StoreWriter {
  /** Runs `fn` in one write transaction (inside the current one when there is one). */
  atomically<T>(fn: () => T): T;
  /** Appends an audit event that belongs to no proposal; `timestamp` defaults to now. */
  audit(kind: string, data: JsonObject, options?: { timestamp?: string; action_id?: string | undefined }): void;
}
