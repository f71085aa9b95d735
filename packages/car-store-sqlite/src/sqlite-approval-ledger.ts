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
import type { ApprovalRecord } from "@car/policy";
import { approvalRecordedData, type ApprovalRow, ledgerEntryOf } from "@car/engine/durable";
import type { DurableApprovalLedger, LedgerEntry } from "@car/engine";
import type { SqliteDatabase } from "./schema.ts";
import type { StoreWriter } from "./store-writer.ts";

const SELECT = "SELECT a.id, a.record, r.revoked_at, r.revoked_by FROM approvals a LEFT JOIN revocations r ON r.approval_id = a.id";

export class SqliteApprovalLedger implements DurableApprovalLedger {
  readonly #writer: StoreWriter;
  readonly #insert;
  readonly #latest;
  readonly #grants;
  readonly #revoke;

  constructor(db: SqliteDatabase, writer: StoreWriter) {
    this.#writer = writer;
    this.#insert = db.prepare("INSERT INTO approvals (fingerprint, decision, decided_at, expires_at, record) VALUES (?, ?, ?, ?, ?)");
    this.#latest = db.prepare(`${SELECT} WHERE a.fingerprint = ? ORDER BY a.id DESC LIMIT 1`);
    this.#grants = db.prepare(
      `${SELECT} WHERE a.decision = 'approved' AND r.approval_id IS NULL AND (a.expires_at IS NULL OR a.expires_at > ?)
       AND a.id = (SELECT max(b.id) FROM approvals b WHERE b.fingerprint = a.fingerprint) ORDER BY a.id`,
    );
    this.#revoke = db.prepare("INSERT INTO revocations (approval_id, revoked_at, revoked_by) VALUES (?, ?, ?)");
    this.list = async () => (db.prepare(`${SELECT} ORDER BY a.id`).all() as ApprovalRow[]).map(ledgerEntryOf);
  }

  readonly list: () => Promise<LedgerEntry[]>;

  async record(record: ApprovalRecord): Promise<void> {
    this.#writer.atomically(() => {
      const id = Number(this.#insert.run(record.fingerprint, record.decision, record.decided_at, record.expires_at, JSON.stringify(record)).lastInsertRowid);
      this.#writer.audit("approval_recorded", approvalRecordedData(id, record), { timestamp: rfc3339(record.decided_at), action_id: record.action_id });
    });
  }

  async latest(fingerprint: string, now: number): Promise<ApprovalRecord | undefined> {
    const row = this.#latest.get(fingerprint) as ApprovalRow | undefined;
    if (row === undefined || row.revoked_at !== null) return undefined;
    const entry = ledgerEntryOf(row);
    return entry.expires_at === null || entry.expires_at > now ? entry : undefined;
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
