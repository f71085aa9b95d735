/**
 * Where approval decisions are kept. Keyed by an operation's fingerprint, so a
 * decision made once (by a human, on any connection) answers every later
 * evaluation of the same operation. The interface is deliberately small and
 * async so a journal, SQLite or PostgreSQL backend can implement it; the
 * in-memory one here is for tests and single-process hosts.
 */
import type { PermissionTier } from "./permission-tier.ts";

export type ApprovalOutcome = "approved" | "rejected";

/** One recorded decision. Snake-case: this is what a durable backend stores and the wire returns. */
export interface ApprovalRecord {
  /** The operation's stable fingerprint (`operationFingerprint`). */
  fingerprint: string;
  decision: ApprovalOutcome;
  /** The tier the decision was made at; an approval covers only operations needing at most this tier. */
  required_tier: PermissionTier;
  /** Who decided: a principal such as `agent:<id>`, `conn:<id>`, or `timeout` when nobody answered. */
  reviewer: string;
  /** When, in milliseconds since the epoch. */
  decided_at: number;
  /** When the decision stops applying (ms since the epoch); `null` for never. */
  expires_at: number | null;
  reason?: string;
  session_id?: string;
  action_id?: string;
  tool?: string;
}

export interface ApprovalLedger {
  /** Appends a decision. Records are never edited; a newer one supersedes. */
  record(record: ApprovalRecord): Promise<void>;
  /** The newest decision for `fingerprint` still in force at `now`, if any. */
  latest(fingerprint: string, now: number): Promise<ApprovalRecord | undefined>;
  /** Every decision, oldest first (audit, `approvals_recorded`). */
  list(): Promise<ApprovalRecord[]>;
}

export class InMemoryApprovalLedger implements ApprovalLedger {
  readonly #records: ApprovalRecord[] = [];

  async record(record: ApprovalRecord): Promise<void> {
    this.#records.push({ ...record });
  }

  async latest(fingerprint: string, now: number): Promise<ApprovalRecord | undefined> {
    for (let i = this.#records.length - 1; i >= 0; i--) {
      const r = this.#records[i] as ApprovalRecord;
      if (r.fingerprint !== fingerprint) continue;
      return r.expires_at === null || r.expires_at > now ? { ...r } : undefined;
    }
    return undefined;
  }

  async list(): Promise<ApprovalRecord[]> {
    return this.#records.map((r) => ({ ...r }));
  }
}
