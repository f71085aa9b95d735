/**
 * The approval ledger on PostgreSQL, shared by every runtime on the
 * database: an approval granted on one host answers the same operation on
 * another. `record` resolves once the decision is committed, so the gate's
 * "decide, record, then run" order makes it durable before the action runs.
 * Records are never edited — a revocation is a row of its own — and each
 * decision and revocation is audited in the log (`approval_recorded`,
 * `approval_revoked`) in the same transaction.
 */
import { CarError, rfc3339 } from "@car/ir";
import type { ApprovalRecord } from "@car/policy";
import type { PoolClient } from "pg";
import { approvalRecordedData, ledgerEntryOf } from "@car/engine/durable";
import type { DurableApprovalLedger, LedgerEntry } from "@car/engine";
import type { AuditedTransaction, ReadQuery } from "./audited-transaction.ts";

interface LedgerRow {
  id: string;
  record: string;
  revoked_at: string | null;
  revoked_by: string | null;
}

/** bigint columns arrive as text: convert, then map as every backend does. */
function entryFrom(row: LedgerRow): LedgerEntry {
  return ledgerEntryOf({ ...row, id: Number(row.id), revoked_at: row.revoked_at === null ? null : Number(row.revoked_at) });
}

const SELECT = "SELECT a.id::text, a.record, r.revoked_at::text, r.revoked_by FROM car_approvals a LEFT JOIN car_revocations r ON r.approval_id = a.id";
const GRANTS = `${SELECT} WHERE a.decision = 'approved' AND r.approval_id IS NULL AND (a.expires_at IS NULL OR a.expires_at > $1)
  AND a.id = (SELECT max(b.id) FROM car_approvals b WHERE b.fingerprint = a.fingerprint)`;

export class PostgresApprovalLedger implements DurableApprovalLedger {
  readonly #read: ReadQuery;
  readonly #transaction: AuditedTransaction;

  constructor(read: ReadQuery, transaction: AuditedTransaction) {
    this.#read = read;
    this.#transaction = transaction;
  }

  async record(record: ApprovalRecord): Promise<void> {
    await this.#transaction(async (client, audit) => {
      const { rows } = await client.query<{ id: string }>(
        "INSERT INTO car_approvals (fingerprint, decision, expires_at, record) VALUES ($1, $2, $3, $4) RETURNING id::text",
        [record.fingerprint, record.decision, record.expires_at, JSON.stringify(record)],
      );
      audit("approval_recorded", approvalRecordedData(Number(rows[0]!.id), record), { timestamp: rfc3339(record.decided_at), action_id: record.action_id });
    });
  }

  async latest(fingerprint: string, now: number): Promise<ApprovalRecord | undefined> {
    const { rows } = await this.#read<LedgerRow>(`${SELECT} WHERE a.fingerprint = $1 ORDER BY a.id DESC LIMIT 1`, [fingerprint]);
    const row = rows[0];
    if (row === undefined || row.revoked_at !== null) return undefined;
    const entry = entryFrom(row);
    return entry.expires_at === null || entry.expires_at > now ? entry : undefined;
  }

  async list(): Promise<LedgerEntry[]> {
    return (await this.#read<LedgerRow>(`${SELECT} ORDER BY a.id`)).rows.map(entryFrom);
  }

  async grants(now: number): Promise<LedgerEntry[]> {
    return (await this.#read<LedgerRow>(`${GRANTS} ORDER BY a.id`, [now])).rows.map(entryFrom);
  }

  async revoke(id: number, by: string, now: number): Promise<LedgerEntry> {
    return this.#transaction(async (client: PoolClient, audit) => {
      // Locks the grant's row, so two runtimes revoking it at once do not both succeed.
      const { rows } = await client.query<LedgerRow>(`${GRANTS} AND a.id = $2 FOR UPDATE OF a`, [now, id]);
      if (rows[0] === undefined) throw new CarError("not_found", `no standing grant with id ${id} (unknown, expired, superseded or already revoked)`, { id });
      await client.query("INSERT INTO car_revocations (approval_id, revoked_at, revoked_by) VALUES ($1, $2, $3)", [id, now, by]);
      const entry = entryFrom(rows[0]);
      audit("approval_revoked", { approval_id: id, fingerprint: entry.fingerprint, revoked_by: by }, { timestamp: rfc3339(now) });
      return { ...entry, revoked_at: now, revoked_by: by };
    });
  }
}
