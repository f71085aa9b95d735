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
import { answeringDecision, checkApprovalScope, inForce, remainingUses } from "@car/policy";
import type { ApprovalRecord, ApprovalScope } from "@car/policy";
import type { PoolClient } from "pg";
import { approvalRecordedData, ledgerEntryOf, SPENT_BY } from "@car/engine/durable";
import type { DurableApprovalLedger, LedgerEntry } from "@car/engine";
import type { Audit, AuditedTransaction, ReadQuery } from "./audited-transaction.ts";

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

/** Stores a decision (without any ledger id it carries) and audits it, in the caller's transaction. */
async function insertRecord(client: PoolClient, audit: Audit, record: ApprovalRecord): Promise<void> {
  const { id: _id, ...stored } = record;
  const { rows } = await client.query<{ id: string }>(
    "INSERT INTO car_approvals (fingerprint, decision, expires_at, record) VALUES ($1, $2, $3, $4) RETURNING id::text",
    [stored.fingerprint, stored.decision, stored.expires_at, JSON.stringify(stored)],
  );
  audit("approval_recorded", approvalRecordedData(Number(rows[0]!.id), stored), { timestamp: rfc3339(stored.decided_at), action_id: stored.action_id });
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
    checkApprovalScope(record);
    await this.#transaction((client, audit) => insertRecord(client, audit, record));
  }

  async latest(fingerprint: string, now: number, scope: ApprovalScope = {}): Promise<ApprovalRecord | undefined> {
    const { rows } = await this.#read<LedgerRow>(`${SELECT} WHERE a.fingerprint = $1 ORDER BY a.id`, [fingerprint]);
    const answer = answeringDecision(rows.map(entryFrom), scope);
    return answer === undefined || answer.revoked_at !== undefined || !inForce(answer, now) ? undefined : answer;
  }

  async consume(record: ApprovalRecord, now: number): Promise<boolean> {
    if (record.id === undefined) return false;
    return this.#transaction(async (client, audit) => {
      // Locks the row first, so of two runtimes spending the last use at once the second reads the first's revocation.
      await client.query("SELECT id FROM car_approvals WHERE id = $1 FOR UPDATE", [record.id]);
      const { rows } = await client.query<LedgerRow>(`${SELECT} WHERE a.id = $1`, [record.id]);
      if (rows[0] === undefined || rows[0].revoked_at !== null) return false;
      const entry = entryFrom(rows[0]);
      if (!inForce(entry, now)) return false;
      await client.query("INSERT INTO car_revocations (approval_id, revoked_at, revoked_by) VALUES ($1, $2, $3)", [entry.id, now, SPENT_BY]);
      const rest = remainingUses(entry);
      audit("approval_used", { approval_id: entry.id, fingerprint: entry.fingerprint, uses_left: rest?.uses ?? 0 }, { timestamp: rfc3339(now) });
      if (rest !== undefined) await insertRecord(client, audit, rest);
      return true;
    });
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
