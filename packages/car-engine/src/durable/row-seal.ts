/**
 * Row seals: the tables a gate trusts at run time (`approvals`, `postures`)
 * are read on every evaluation, far too often to verify the chain each time.
 * So each such row carries a seal, HMAC-SHA256 under the audit key of the
 * row's canonical form, written with the row; a reader recomputes it and
 * refuses (`chain_broken`) a row whose seal does not match. A row inserted
 * or edited by a database writer without the key is then never honoured.
 *
 * An approval's seal covers its revocation too (re-sealed when a use is
 * spent or the grant revoked), so deleting a revocation row does not bring a
 * spent approval back. What a seal cannot show is a whole row deleted or an
 * older copy restored: `car audit verify` finds those by replaying the
 * chained log (table-replay.ts) and against anchors.
 *
 * Without an audit key the seal is `sha256:` and a plain SHA-256 — it
 * catches a naive edit only, like the unkeyed hash chain (the README's
 * trust model). With the key an unkeyed seal is refused (no downgrade);
 * without it a keyed seal cannot be checked and is taken as it stands, as
 * the MACs are (verification then says the log is unkeyed).
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { CarError, canonicalJson } from "@car/ir";
import type { JsonObject } from "@car/ir";
import { sha256Hex } from "./event-hash.ts";
import type { AuditKey } from "./event-mac.ts";

/** The tables whose rows are sealed. */
export type SealedTable = "approvals" | "postures" | "supervision_intents" | "approval_waits";

const UNKEYED = "sha256:";

export function rowSeal(key: AuditKey | undefined, table: SealedTable, row: JsonObject): string {
  const text = canonicalJson({ table, row });
  return key === undefined ? `${UNKEYED}${sha256Hex(text)}` : createHmac("sha256", key.key).update(text, "utf8").digest("hex");
}

export function sealMatches(key: AuditKey | undefined, table: SealedTable, row: JsonObject, seal: string | null): boolean {
  if (typeof seal !== "string") return false;
  // Without the key a keyed seal cannot be checked (see above).
  if (key === undefined && !seal.startsWith(UNKEYED)) return /^[0-9a-f]{64}$/.test(seal);
  const expected = Buffer.from(rowSeal(key, table, row));
  const actual = Buffer.from(seal);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** The refusal of a row whose seal does not match: nothing it says is honoured. */
export function unsealedRow(table: SealedTable, what: string): CarError {
  return new CarError(
    "chain_broken",
    `the ${table} row ${what} does not match its seal: it was written or edited outside CAR (or before the audit key), so it is not honoured; run car audit verify`,
    { table },
  );
}

/** What an approval's seal covers: its id, the stored record text and its revocation (null while in force). */
export function approvalSealRow(id: number, record: string, revoked_at: number | null, revoked_by: string | null): JsonObject {
  return { id, record, revoked_at, revoked_by };
}

/** What a shared supervision intent's seal covers: the whole row — what supervisors are shown, where it waits, its decision (null until decided). */
export function intentSealRow(id: string, server_id: string, agent_id: string | null, intent: string, decision: string | null): JsonObject {
  return { id, server_id, agent_id, intent, decision };
}

/** What a posture's seal covers: the whole row. */
export function postureSealRow(agent_id: string, tier: string, posture: string, updated_at: number): JsonObject {
  return { agent_id, tier, posture, updated_at };
}
