/**
 * What the SQLite and PostgreSQL approval ledgers have in common once a row
 * is read: the stored record plus its revocation becomes a `LedgerEntry`,
 * and a new decision is audited with the same `approval_recorded` data.
 */
import type { ApprovalRecord } from "@car/policy";
import type { LedgerEntry } from "./durable-store.ts";

/** An approval joined with its revocation, in JavaScript numbers (each driver converts its own integer types first). */
export interface ApprovalRow {
  id: number;
  /** The `ApprovalRecord` as JSON. */
  record: string;
  revoked_at: number | null;
  revoked_by: string | null;
}

export function ledgerEntryOf(row: ApprovalRow): LedgerEntry {
  const entry: LedgerEntry = { ...(JSON.parse(row.record) as ApprovalRecord), id: row.id };
  if (row.revoked_at !== null) entry.revoked_at = row.revoked_at;
  if (row.revoked_by !== null) entry.revoked_by = row.revoked_by;
  return entry;
}

/** The `approval_recorded` event's data for the decision stored under `id`. */
export function approvalRecordedData(id: number, record: ApprovalRecord): Record<string, string | number | null> {
  const data: Record<string, string | number | null> = {
    approval_id: id,
    fingerprint: record.fingerprint,
    decision: record.decision,
    required_tier: record.required_tier,
    reviewer: record.reviewer,
    expires_at: record.expires_at,
  };
  for (const key of ["reason", "session_id", "tool", "run_id", "agent_id", "uses", "copy_of"] as const) if (record[key] !== undefined) data[key] = record[key];
  return data;
}

/** Who a spent use's revocation names (`ApprovalLedger.consume`). */
export const SPENT_BY = "spent";
