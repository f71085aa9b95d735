/**
 * How the ledger and the posture store change the database: one transaction
 * that makes the change and appends its audit events to the shared log, so
 * the ledger and the audit trail never disagree.
 */
import type { JsonObject } from "@car/ir";
import type { PoolClient } from "pg";

/** Queues one audit event (proposal_id null) for the transaction's commit. */
export type Audit = (kind: string, data: JsonObject, options?: { timestamp?: string; action_id?: string | undefined }) => void;

export type AuditedTransaction = <T>(work: (client: PoolClient, audit: Audit) => Promise<T>) => Promise<T>;
