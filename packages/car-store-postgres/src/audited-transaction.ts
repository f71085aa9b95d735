/**
 * How the log, the ledger and the posture store reach the database. Reads
 * go through `ReadQuery` (which waits for the store's start-up and reports
 * failures as `storage_error`); changes run in an `AuditedTransaction`, one
 * transaction that makes the change and appends its audit events to the
 * shared log, so the ledger and the audit trail never disagree.
 */
import type { JsonObject } from "@car/ir";
import type { PoolClient, QueryResult, QueryResultRow } from "pg";

export type ReadQuery = <R extends QueryResultRow>(sql: string, params?: readonly unknown[]) => Promise<QueryResult<R>>;

/** Queues one audit event (proposal_id null) for the transaction's commit. */
export type Audit = (kind: string, data: JsonObject, options?: { timestamp?: string; action_id?: string | undefined }) => void;

export type AuditedTransaction = <T>(work: (client: PoolClient, audit: Audit) => Promise<T>) => Promise<T>;
