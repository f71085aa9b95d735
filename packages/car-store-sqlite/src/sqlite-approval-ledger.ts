/**
 * The approval ledger in SQLite (implements @car/policy's `ApprovalLedger`).
 * `record` returns only once the decision is committed, so the gate's
 * "decide, record, then run" order makes every decision durable before the
 * action it allows runs. Records are never edited: a revocation is a row of
 * its own. Each decision and revocation is also appended to the hash-chained
 * event log (`approval_recorded`, `approval_revoked`) in the same
 * transaction, so the audit trail and the ledger agree.
 */
import { CarError, rfc3339 } from "@car/ir";
import { answeringDecision, checkApprovalScope, inForce, remainingUses } from "@car/policy";
import type { ApprovalRecord, ApprovalScope } from "@car/policy";
import { approvalRecordedData, type ApprovalRow, ledgerEntryOf, SPENT_BY } from "@car/engine/durable";
import type { DurableApprovalLedger, LedgerEntry } from "@car/engine";
import type { SqliteDatabase } from "./schema.ts";
import type { StoreWriter } from "./store-writer.ts";

const SELECT = "SELECT a.id, a.record, r.revoked_at, r.revoked_by FROM approvals a LEFT JOIN revocations r ON r.approval_id = a.id";

export class SqliteApprovalLedger implements DurableApprovalLedger {
  readonly #writer: StoreWriter;
  readonly #insert;
  readonly #byFingerprint;
  readonly #grants;
  readonly #revoke;

  constructor(db: SqliteDatabase, writer: StoreWriter) {
    this.#writer = writer;
    this.#insert = db.prepare("INSERT INTO approvals (fingerprint, decision, decided_at, expires_at, record) VALUES (?, ?, ?, ?, ?)");
    this.#byFingerprint = db.prepare(`${SELECT} WHERE a.fingerprint = ? ORDER BY a.id`);
    this.#grants = db.prepare(
      `${SELECT} WHERE a.decision = 'approved' AND r.approval_id IS NULL AND (a.expires_at IS NULL OR a.expires_at > ?)
       AND a.id = (SELECT max(b.id) FROM approvals b WHERE b.fingerprint = a.fingerprint) ORDER BY a.id`,
    );
    this.#revoke = db.prepare("INSERT INTO revocations (approval_id, revoked_at, revoked_by) VALUES (?, ?, ?)");
    this.list = async () => (db.prepare(`${SELECT} ORDER BY a.id`).all() as ApprovalRow[]).map(ledgerEntryOf);
  }

  readonly list: () => Promise<LedgerEntry[]>;

  async record(record: ApprovalRecord): Promise<void> {
    checkApprovalScope(record);
    this.#writer.atomically(() => this.#insertRecord(record));
  }

  #insertRecord(record: ApprovalRecord): void {
    const { id: _id, ...stored } = record;
    const id = Number(this.#insert.run(stored.fingerprint, stored.decision, stored.decided_at, stored.expires_at, JSON.stringify(stored)).lastInsertRowid);
    this.#writer.audit("approval_recorded", approvalRecordedData(id, stored), { timestamp: rfc3339(stored.decided_at), action_id: stored.action_id });
  }

  async latest(fingerprint: string, now: number, scope: ApprovalScope = {}): Promise<ApprovalRecord | undefined> {
    const answer = answeringDecision((this.#byFingerprint.all(fingerprint) as ApprovalRow[]).map(ledgerEntryOf), scope);
    return answer === undefined || answer.revoked_at !== undefined || !inForce(answer, now) ? undefined : answer;
  }

  async consume(record: ApprovalRecord, now: number): Promise<boolean> {
    return this.#writer.atomically(() => {
      const row = (this.#byFingerprint.all(record.fingerprint) as ApprovalRow[]).find((r) => r.id === record.id);
      if (row === undefined || row.revoked_at !== null) return false;
      const entry = ledgerEntryOf(row);
      if (!inForce(entry, now)) return false;
      this.#revoke.run(entry.id, now, SPENT_BY);
      const rest = remainingUses(entry);
      this.#writer.audit("approval_used", { approval_id: entry.id, fingerprint: entry.fingerprint, uses_left: rest?.uses ?? 0 }, { timestamp: rfc3339(now) });
      if (rest !== undefined) this.#insertRecord(rest);
      return true;
    });
  }

  async grants(now: number): Promise<LedgerEntry[]> {
    return (this.#grants.all(now) as ApprovalRow[]).map(ledgerEntryOf);
  }

  async revoke(id: number, by: string, now: number): Promise<LedgerEntry> {
    return this.#writer.atomically(() => {
      const grant = (this.#grants.all(now) as ApprovalRow[]).find((row) => row.id === id);
      if (grant === undefined) throw new CarError("not_found", `no standing grant with id ${id} (unknown, expired, superseded or already revoked)`, { id });
      this.#revoke.run(id, now, by);
      const entry = ledgerEntryOf(grant);
      this.#writer.audit("approval_revoked", { approval_id: id, fingerprint: entry.fingerprint, revoked_by: by }, { timestamp: rfc3339(now) });
      return { ...entry, revoked_at: now, revoked_by: by };
    });
  }
}
