/**
 * Where approval decisions are kept. Keyed by an operation's fingerprint, so a
 * decision made once (by a human, on any connection) answers every later
 * evaluation of the same operation. The interface is deliberately small and
 * async so a journal, SQLite or PostgreSQL backend can implement it; the
 * in-memory one here is for tests and single-process hosts.
 *
 * A decision may be scoped (DECISIONS §22): to one run (`run_id`), to one
 * agent (`agent_id`), to a number of executions (`uses`), and in time
 * (`expires_at`). An unscoped approval covers its operation for every run of
 * every agent, as often as it comes, until it is revoked or superseded by a
 * newer decision. The decision that answers an evaluation is the newest one
 * whose scope covers it; a spent use is recorded as that record's
 * revocation plus, while uses remain, a copy with one use fewer that keeps
 * the original's place in that order (`copy_of`).
 */
import { CarError, type JsonValue } from "@car/ir";
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
  /** What the reviewer based the decision on (a diff, a ticket, a test run), kept with the decision. */
  evidence?: JsonValue;
  session_id?: string;
  action_id?: string;
  tool?: string;
  /** Only within this run (the runtime's run id, DECISIONS §20). */
  run_id?: string;
  /** Only for this agent's evaluations. */
  agent_id?: string;
  /** How many more executions it allows; absent for no limit. Each admitted execution spends one (`consume`). */
  uses?: number;
  /** The ledger's id for the stored record (set by the ledger on what it returns). */
  id?: number;
  /** On the copy a spent use leaves: the id of the decision it continues (its place among newer and older decisions). */
  copy_of?: number;
}

/** Who is asking, for scoped decisions: the run and the agent an evaluation is for. */
export interface ApprovalScope {
  run_id?: string | undefined;
  agent_id?: string | undefined;
}

/** Whether `record`'s scope covers an evaluation in `scope`. */
export function coversScope(record: ApprovalRecord, scope: ApprovalScope): boolean {
  return (record.agent_id === undefined || record.agent_id === scope.agent_id) && (record.run_id === undefined || record.run_id === scope.run_id);
}

/**
 * The decision that answers an evaluation in `scope`, from the stored
 * decisions on one fingerprint (each with its ledger `id`): the newest whose
 * scope covers it, a copy counting from the decision it continues. Whether
 * it is still in force is `inForce`'s to say.
 */
export function answeringDecision<R extends ApprovalRecord>(records: readonly R[], scope: ApprovalScope): R | undefined {
  let best: R | undefined;
  const place = (r: R): number => r.copy_of ?? r.id ?? 0;
  for (const r of records) {
    if (!coversScope(r, scope)) continue;
    if (best === undefined || place(r) > place(best) || (place(r) === place(best) && (r.id ?? 0) > (best.id ?? 0))) best = r;
  }
  return best;
}

/** The record a spent use leaves behind while uses remain: one use fewer, in the original's place. */
export function remainingUses<R extends ApprovalRecord>(spent: R): ApprovalRecord | undefined {
  if (spent.uses === undefined || spent.uses <= 1) return undefined;
  const { id, ...rest } = spent as ApprovalRecord & { revoked_at?: number; revoked_by?: string };
  delete rest.revoked_at;
  delete rest.revoked_by;
  return { ...rest, uses: spent.uses - 1, copy_of: spent.copy_of ?? id! };
}

/** Not expired at `now`, and with a use left when it counts uses. */
export function inForce(record: ApprovalRecord, now: number): boolean {
  return (record.expires_at === null || record.expires_at > now) && (record.uses === undefined || record.uses > 0);
}

/** Checks a decision's scope fields: a malformed one is refused, never stored as unscoped. */
export function checkApprovalScope(record: ApprovalRecord): void {
  if (record.uses !== undefined && (!Number.isSafeInteger(record.uses) || record.uses < 1)) {
    throw new CarError("invalid_params", `uses must be a positive integer, got ${JSON.stringify(record.uses)}`);
  }
  for (const key of ["run_id", "agent_id"] as const) {
    const value = record[key];
    if (value !== undefined && (typeof value !== "string" || value === "")) throw new CarError("invalid_params", `${key} must be a non-empty string`);
  }
}

export interface ApprovalLedger {
  /** Appends a decision. Records are never edited; a newer one supersedes. */
  record(record: ApprovalRecord): Promise<void>;
  /** The decision on `fingerprint` that answers an evaluation in `scope` (`answeringDecision`), when it is still in force at `now`. */
  latest(fingerprint: string, now: number, scope?: ApprovalScope): Promise<ApprovalRecord | undefined>;
  /**
   * Spends one use of a use-limited decision `latest` returned (by its
   * `id`). False when none is left — another evaluation spent the last one
   * first, or it was revoked — so exactly `uses` executions get through.
   */
  consume(record: ApprovalRecord, now: number): Promise<boolean>;
  /** Every decision, oldest first (audit, `approvals_recorded`). */
  list(): Promise<ApprovalRecord[]>;
}

export class InMemoryApprovalLedger implements ApprovalLedger {
  readonly #records: ApprovalRecord[] = [];
  /** Ids of records whose use was spent (superseded by a copy with one use fewer, or used up). */
  readonly #spent = new Set<number>();

  async record(record: ApprovalRecord): Promise<void> {
    checkApprovalScope(record);
    this.#records.push({ ...record, id: this.#records.length + 1 });
  }

  async latest(fingerprint: string, now: number, scope: ApprovalScope = {}): Promise<ApprovalRecord | undefined> {
    const answer = answeringDecision(
      this.#records.filter((r) => r.fingerprint === fingerprint),
      scope,
    );
    // A spent record answers with nothing: its copy (if uses remain) is newer and would have answered.
    return answer !== undefined && !this.#spent.has(answer.id!) && inForce(answer, now) ? { ...answer } : undefined;
  }

  async consume(record: ApprovalRecord, now: number): Promise<boolean> {
    const stored = this.#records.find((r) => r.id === record.id);
    if (stored === undefined || this.#spent.has(stored.id!) || !inForce(stored, now)) return false;
    this.#spent.add(stored.id!);
    const rest = remainingUses(stored);
    if (rest !== undefined) this.#records.push({ ...rest, id: this.#records.length + 1 });
    return true;
  }

  async list(): Promise<ApprovalRecord[]> {
    return this.#records.map((r) => ({ ...r }));
  }
}
