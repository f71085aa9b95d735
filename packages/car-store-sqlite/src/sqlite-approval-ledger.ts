/**
 * The approval ledger in SQLite (implements @car/policy's `ApprovalLedger`).
 * `record` returns only once the decision is committed, so the gate's
 * "decide, record, then run" order makes every decision durable before the
 * action it allows runs. Records are never edited: a revocation is a row of
 * its own. Each decision and revocation is also appended to the hash-chained
 * event log (`approval_recorded`, `approval_revoked`) in the same
 * transaction, so the audit trail and the ledger agree. Every row carries a
 * seal over its record and revocation (row-seal.ts); a row whose seal does
 * not match is refused (`chain_broken`), never honoured.
 */
import { CarError, rfc3339 } from "@car/ir";
import { answeringDecision, checkApprovalScope, inForce, remainingUses } from "@car/policy";
import type { ApprovalRecord, ApprovalScope } from "@car/policy";
import {
  approvalRecordedData,
  type ApprovalRow,
  approvalSealRow,
  type AuditKey,
  ledgerEntryOf,
  requireCurrentApprovals,
  rowSeal,
  SPENT_BY,
  sealMatches,
  unsealedRow,
} from "@car/engine/durable";
import type { DurableApprovalLedger, LedgerEntry } from "@car/engine";
import { approvalHeads, logWasCut } from "./row-currency-sql.ts";
import type { SqliteDatabase } from "./schema.ts";
import type { StoreWriter } from "./store-writer.ts";
import { VerifiedRowsCache } from "./verified-rows-cache.ts";

const SELECT = "SELECT a.id, a.record, r.revoked_at, r.revoked_by, a.seal FROM approvals a LEFT JOIN revocations r ON r.approval_id = a.id";

type SealedRow = ApprovalRow & { seal: string | null };

export class SqliteApprovalLedger implements DurableApprovalLedger {
  readonly #writer: StoreWriter;
  readonly #key: AuditKey | undefined;
  readonly #insert;
  readonly #seal;
  readonly #all;
  readonly #byFingerprint;
  readonly #grants;
  readonly #revoke;
  readonly #current: (fingerprint: string) => readonly SealedRow[];

  /** `key`: the audit key the rows are sealed under (none: an unkeyed seal). */
  constructor(db: SqliteDatabase, writer: StoreWriter, key: AuditKey | undefined) {
    this.#writer = writer;
    this.#key = key;
    this.#seal = db.prepare("UPDATE approvals SET seal = ? WHERE id = ?");
    this.#insert = db.prepare("INSERT INTO approvals (fingerprint, decision, decided_at, expires_at, record) VALUES (?, ?, ?, ?, ?)");
    this.#byFingerprint = db.prepare(`${SELECT} WHERE a.fingerprint = ? ORDER BY a.id`);
    this.#grants = db.prepare(
      `${SELECT} WHERE a.decision = 'approved' AND r.approval_id IS NULL AND (a.expires_at IS NULL OR a.expires_at > ?)
       AND a.id = (SELECT max(b.id) FROM approvals b WHERE b.fingerprint = a.fingerprint) ORDER BY a.id`,
    );
    this.#revoke = db.prepare("INSERT INTO revocations (approval_id, revoked_at, revoked_by) VALUES (?, ?, ?)");
    this.#all = db.prepare(`${SELECT} ORDER BY a.id`);
    // The rows and the log's newest event about each, in one read snapshot (another process may commit between two statements).
    const current = db.transaction((fingerprint: string) => {
      const rows = this.#sealed(this.#byFingerprint.all(fingerprint) as SealedRow[]);
      requireCurrentApprovals(approvalHeads(db, fingerprint), rows, logWasCut(db));
      return rows;
    });
    // Verified once until the database changes (verified-rows-cache.ts).
    const cache = new VerifiedRowsCache<SealedRow>(db);
    this.#current = (fingerprint) => cache.read(fingerprint, () => current(fingerprint));
    this.list = async () => (this.#all.all() as ApprovalRow[]).map(ledgerEntryOf);
  }

  readonly list: () => Promise<LedgerEntry[]>;

  /** Seals every row that has none (rows the store has found the log vouches for). */
  sealUnsealed(): void {
    for (const row of this.rows())
      if (row.seal === null) this.#seal.run(rowSeal(this.#key, "approvals", approvalSealRow(row.id, row.record, row.revoked_at, row.revoked_by)), row.id);
  }

  /** Every row as stored, revocation and seal included (what verification checks). */
  rows(): SealedRow[] {
    return this.#all.all() as SealedRow[];
  }

  async record(record: ApprovalRecord): Promise<void> {
    checkApprovalScope(record);
    this.#writer.atomically(() => this.#insertRecord(record));
  }

  #insertRecord(record: ApprovalRecord): void {
    const { id: _id, ...stored } = record;
    const text = JSON.stringify(stored);
    const id = Number(this.#insert.run(stored.fingerprint, stored.decision, stored.decided_at, stored.expires_at, text).lastInsertRowid);
    this.#seal.run(rowSeal(this.#key, "approvals", approvalSealRow(id, text, null, null)), id);
    this.#writer.audit("approval_recorded", approvalRecordedData(id, stored), { timestamp: rfc3339(stored.decided_at), action_id: stored.action_id });
  }

  async latest(fingerprint: string, now: number, scope: ApprovalScope = {}): Promise<ApprovalRecord | undefined> {
    const answer = answeringDecision(this.#current(fingerprint).map(ledgerEntryOf), scope);
    return answer === undefined || answer.revoked_at !== undefined || !inForce(answer, now) ? undefined : answer;
  }

  async consume(record: ApprovalRecord, now: number): Promise<boolean> {
    return this.#writer.atomically(() => {
      const row = this.#current(record.fingerprint).find((r) => r.id === record.id);
      if (row === undefined || row.revoked_at !== null) return false;
      const entry = ledgerEntryOf(row);
      if (!inForce(entry, now)) return false;
      this.#revokeRow(row, now, SPENT_BY);
      const rest = remainingUses(entry);
      this.#writer.audit("approval_used", { approval_id: entry.id, fingerprint: entry.fingerprint, uses_left: rest?.uses ?? 0 }, { timestamp: rfc3339(now) });
      if (rest !== undefined) this.#insertRecord(rest);
      return true;
    });
  }

  async grants(now: number): Promise<LedgerEntry[]> {
    return this.#sealed(this.#grants.all(now) as SealedRow[]).map(ledgerEntryOf);
  }

  async revoke(id: number, by: string, now: number): Promise<LedgerEntry> {
    return this.#writer.atomically(() => {
      const grant = this.#sealed(this.#grants.all(now) as SealedRow[]).find((row) => row.id === id);
      if (grant === undefined) throw new CarError("not_found", `no standing grant with id ${id} (unknown, expired, superseded or already revoked)`, { id });
      this.#revokeRow(grant, now, by);
      const entry = ledgerEntryOf(grant);
      this.#writer.audit("approval_revoked", { approval_id: id, fingerprint: entry.fingerprint, revoked_by: by }, { timestamp: rfc3339(now) });
      return { ...entry, revoked_at: now, revoked_by: by };
    });
  }

  /** Records the revocation and re-seals the approval over it, so deleting the revocation row does not revive the grant. */
  #revokeRow(row: ApprovalRow, now: number, by: string): void {
    this.#revoke.run(row.id, now, by);
    this.#seal.run(rowSeal(this.#key, "approvals", approvalSealRow(row.id, row.record, now, by)), row.id);
  }

  /** The rows, once every one matches its seal: one that does not makes the whole answer untrustworthy (an edited newer decision must not let an older one answer). */
  #sealed(rows: SealedRow[]): SealedRow[] {
    for (const row of rows)
      if (!sealMatches(this.#key, "approvals", approvalSealRow(row.id, row.record, row.revoked_at, row.revoked_by), row.seal))
        throw unsealedRow("approvals", String(row.id));
    return rows;
  }
}
