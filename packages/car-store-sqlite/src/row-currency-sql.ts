/**
 * The log's index for row currency (@car/engine/durable row-currency.ts):
 * the approval events of one fingerprint and the posture events of one
 * agent, found without scanning the log. Partial indexes, so only those
 * few events pay for them; a query must repeat the exact expression and
 * `WHERE` term for SQLite to use one.
 */
import type { ApprovalHead, PostureEvent } from "@car/engine/durable";
import type { SqliteDatabase } from "./schema.ts";
import { cachedStatement } from "./statement-cache.ts";

const APPROVAL_KINDS = "kind IN ('approval_recorded', 'approval_used', 'approval_revoked')";
const POSTURE_KINDS = "kind IN ('posture_set', 'posture_cleared')";

export const APPROVAL_EVENTS_INDEX = `CREATE INDEX events_by_fingerprint ON events (json_extract(data, '$.fingerprint'), seq) WHERE ${APPROVAL_KINDS}`;
export const POSTURE_EVENTS_INDEX = `CREATE INDEX events_by_agent ON events (json_extract(data, '$.agent_id'), seq) WHERE ${POSTURE_KINDS}`;

/** The newest approval event of each approval id of `fingerprint` (SQLite returns the row of `max(seq)` for the bare columns). */
export function approvalHeads(db: SqliteDatabase, fingerprint: string): ApprovalHead[] {
  return cachedStatement(
    db,
    `SELECT json_extract(data, '$.approval_id') AS approval_id, kind, ts AS at, json_extract(data, '$.revoked_by') AS revoked_by, max(seq) AS seq
     FROM events WHERE json_extract(data, '$.fingerprint') = ? AND ${APPROVAL_KINDS} GROUP BY 1`,
  ).all(fingerprint) as ApprovalHead[];
}

/** The posture events of `agent_id`, oldest first. */
export function postureEvents(db: SqliteDatabase, agent_id: string): PostureEvent[] {
  return cachedStatement(
    db,
    `SELECT kind, json_extract(data, '$.tier') AS tier, ts AS at, json_extract(data, '$.posture') AS posture
     FROM events WHERE json_extract(data, '$.agent_id') = ? AND ${POSTURE_KINDS} ORDER BY seq`,
  ).all(agent_id) as PostureEvent[];
}

/** Whether retention (or an operator's cut) removed events: then a row whose events are gone is taken on its seal. */
export function logWasCut(db: SqliteDatabase): boolean {
  return (cachedStatement(db, "SELECT EXISTS (SELECT 1 FROM checkpoints) AS cut").get() as { cut: number }).cut === 1;
}
