/**
 * The approval ledger on PostgreSQL, shared by every runtime on the
 * database: an approval granted on one host answers the same operation on
 * another. `record` resolves once the decision is committed, so the gate's
 * "decide, record, then run" order makes it durable before the action runs.
 * Records are never edited — a revocation is a row of its own — and each
 * decision and revocation is audited in the log (`approval_recorded`,
 * `approval_revoked`) in the same transaction. Every row carries a seal
 * over its record and revocation, computed here under the audit key the
 * database never sees (row-seal.ts); a row whose seal does not match is
 * refused (`chain_broken`), never honoured.
 */
import { CarError, rfc3339 } from "@car/ir";
import { answeringDecision, checkApprovalScope, inForce, remainingUses } from "@car/policy";
import type { ApprovalRecord, ApprovalScope } from "@car/policy";
import type { PoolClient } from "pg";
import {
  type ApprovalRow,
  approvalRecordedData,
  approvalSealRow,
  type AuditKey,
  ledgerEntryOf,
  rowSeal,
  SPENT_BY,
  sealMatches,
  unsealedRow,
} from "@car/engine/durable";
import type { DurableApprovalLedger, LedgerEntry } from "@car/engine";
import type { Audit, AuditedTransaction, ReadQuery } from "./audited-transaction.ts";
import { encodeMessage, OVERSIGHT_CHANNEL } from "./oversight-messages.ts";

interface LedgerRow {
  id: string;
  record: string;
  revoked_at: string | null;
  revoked_by: string | null;
  seal: string | null;
}

/** bigint columns arrive as text: convert to the row every backend maps. */
function rowFrom(row: LedgerRow): ApprovalRow & { seal: string | null } {
  return { ...row, id: Number(row.id), revoked_at: row.revoked_at === null ? null : Number(row.revoked_at) };
}

const SELECT = "SELECT a.id::text, a.record, r.revoked_at::text, r.revoked_by, a.seal FROM car_approvals a LEFT JOIN car_revocations r ON r.approval_id = a.id";
/** Every approval row as stored, revocation and seal included (what verification checks, in its own transaction). */
export async function approvalRows(read: ReadQuery): Promise<(ApprovalRow & { seal: string | null })[]> {
  return (await read<LedgerRow>(`${SELECT} ORDER BY a.id`)).rows.map(rowFrom);
}

/** Seals every approval row that has none, in the caller's transaction (rows the store has found the log vouches for). */
export async function sealUnsealedApprovals(client: PoolClient, key: AuditKey | undefined): Promise<void> {
  const read: ReadQuery = (sql, params) => client.query(sql, params === undefined ? [] : [...params]);
  for (const row of await approvalRows(read))
    if (row.seal === null)
      await client.query("UPDATE car_approvals SET seal = $1 WHERE id = $2", [
        rowSeal(key, "approvals", approvalSealRow(row.id, row.record, row.revoked_at, row.revoked_by)),
        row.id,
      ]);
}

const GRANTS = `${SELECT} WHERE a.decision = 'approved' AND r.approval_id IS NULL AND (a.expires_at IS NULL OR a.expires_at > $1)
  AND a.id = (SELECT max(b.id) FROM car_approvals b WHERE b.fingerprint = a.fingerprint)`;

export class PostgresApprovalLedger implements DurableApprovalLedger {
  readonly #read: ReadQuery;
  readonly #transaction: AuditedTransaction;
  readonly #key: AuditKey | undefined;

  /** `key`: the audit key the rows are sealed under (none: an unkeyed seal). */
  constructor(read: ReadQuery, transaction: AuditedTransaction, key: AuditKey | undefined) {
    this.#read = read;
    this.#transaction = transaction;
    this.#key = key;
  }

  /** Stores a decision (without any ledger id it carries), seals and audits it, in the caller's transaction. */
  async #insertRecord(client: PoolClient, audit: Audit, record: ApprovalRecord): Promise<void> {
    const { id: _id, ...stored } = record;
    const text = JSON.stringify(stored);
    const { rows } = await client.query<{ id: string }>(
      "INSERT INTO car_approvals (fingerprint, decision, expires_at, record) VALUES ($1, $2, $3, $4) RETURNING id::text",
      [stored.fingerprint, stored.decision, stored.expires_at, text],
    );
    const id = Number(rows[0]!.id);
    await client.query("UPDATE car_approvals SET seal = $1 WHERE id = $2", [rowSeal(this.#key, "approvals", approvalSealRow(id, text, null, null)), id]);
    audit("approval_recorded", approvalRecordedData(id, stored), { timestamp: rfc3339(stored.decided_at), action_id: stored.action_id });
    // Sent with the commit: a proposal waiting for this operation on any server reads the ledger again now.
    const wakeUp = encodeMessage(this.#key, "ledger", { k: "approval", fp: stored.fingerprint });
    if (wakeUp !== undefined) await client.query("SELECT pg_notify($1, $2)", [OVERSIGHT_CHANNEL, wakeUp]);
  }

  /** Records the revocation and re-seals the approval over it, so deleting the revocation row does not revive the grant. */
  async #revokeRow(client: PoolClient, row: ApprovalRow, now: number, by: string): Promise<void> {
    await client.query("INSERT INTO car_revocations (approval_id, revoked_at, revoked_by) VALUES ($1, $2, $3)", [row.id, now, by]);
    await client.query("UPDATE car_approvals SET seal = $1 WHERE id = $2", [
      rowSeal(this.#key, "approvals", approvalSealRow(row.id, row.record, now, by)),
      row.id,
    ]);
  }

  /** The rows as entries, once every one matches its seal: one that does not makes the whole answer untrustworthy. */
  #entries(rows: readonly LedgerRow[]): LedgerEntry[] {
    return rows.map((raw) => {
      const row = rowFrom(raw);
      if (!sealMatches(this.#key, "approvals", approvalSealRow(row.id, row.record, row.revoked_at, row.revoked_by), row.seal))
        throw unsealedRow("approvals", String(row.id));
      return ledgerEntryOf(row);
    });
  }

  /** Every row as stored, revocation and seal included. */
  rows(): Promise<(ApprovalRow & { seal: string | null })[]> {
    return approvalRows(this.#read);
  }

  async record(record: ApprovalRecord): Promise<void> {
    checkApprovalScope(record);
    await this.#transaction((client, audit) => this.#insertRecord(client, audit, record));
  }

  async latest(fingerprint: string, now: number, scope: ApprovalScope = {}): Promise<ApprovalRecord | undefined> {
    const { rows } = await this.#read<LedgerRow>(`${SELECT} WHERE a.fingerprint = $1 ORDER BY a.id`, [fingerprint]);
    const answer = answeringDecision(this.#entries(rows), scope);
    return answer === undefined || answer.revoked_at !== undefined || !inForce(answer, now) ? undefined : answer;
  }

  async consume(record: ApprovalRecord, now: number): Promise<boolean> {
    if (record.id === undefined) return false;
    return this.#transaction(async (client, audit) => {
      // Locks the row first, so of two runtimes spending the last use at once the second reads the first's revocation.
      await client.query("SELECT id FROM car_approvals WHERE id = $1 FOR UPDATE", [record.id]);
      const { rows } = await client.query<LedgerRow>(`${SELECT} WHERE a.id = $1`, [record.id]);
      if (rows[0] === undefined || rows[0].revoked_at !== null) return false;
      const entry = this.#entries(rows)[0]!;
      if (!inForce(entry, now)) return false;
      await this.#revokeRow(client, rowFrom(rows[0]), now, SPENT_BY);
      const rest = remainingUses(entry);
      audit("approval_used", { approval_id: entry.id, fingerprint: entry.fingerprint, uses_left: rest?.uses ?? 0 }, { timestamp: rfc3339(now) });
      if (rest !== undefined) await this.#insertRecord(client, audit, rest);
      return true;
    });
  }

  async list(): Promise<LedgerEntry[]> {
    return (await this.rows()).map(ledgerEntryOf);
  }

  async grants(now: number): Promise<LedgerEntry[]> {
    return this.#entries((await this.#read<LedgerRow>(`${GRANTS} ORDER BY a.id`, [now])).rows);
  }

  async revoke(id: number, by: string, now: number): Promise<LedgerEntry> {
    return this.#transaction(async (client: PoolClient, audit) => {
      // Locks the grant's row, so two runtimes revoking it at once do not both succeed.
      const { rows } = await client.query<LedgerRow>(`${GRANTS} AND a.id = $2 FOR UPDATE OF a`, [now, id]);
      if (rows[0] === undefined) throw new CarError("not_found", `no standing grant with id ${id} (unknown, expired, superseded or already revoked)`, { id });
      const entry = this.#entries(rows)[0]!;
      await this.#revokeRow(client, rowFrom(rows[0]), now, by);
      audit("approval_revoked", { approval_id: id, fingerprint: entry.fingerprint, revoked_by: by }, { timestamp: rfc3339(now) });
      return { ...entry, revoked_at: now, revoked_by: by };
    });
  }
}
