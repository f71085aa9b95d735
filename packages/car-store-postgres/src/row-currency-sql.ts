/**
 * Row currency on PostgreSQL (@car/engine/durable row-currency.ts): the
 * approval rows of one fingerprint, or the posture rows of one agent, read
 * together with the log's events about them in ONE statement, so both come
 * from the same snapshot (another runtime may commit between two). The
 * events are found through partial expression indexes (migration
 * "row currency") that only those few events pay for.
 */
import type { ApprovalHead, ApprovalRow, PostureEvent, PostureRow } from "@car/engine/durable";
import type { ReadQuery } from "./audited-transaction.ts";

const APPROVAL_KINDS = "kind IN ('approval_recorded', 'approval_used', 'approval_revoked')";
const POSTURE_KINDS = "kind IN ('posture_set', 'posture_cleared')";
const DATA = "((body::jsonb) -> 'data')";

/** The indexes the queries below use (the expression and `WHERE` must match them exactly). */
export const ROW_CURRENCY_INDEXES = `
  CREATE INDEX car_events_by_fingerprint ON car_events ((${DATA} ->> 'fingerprint'), seq) WHERE ${APPROVAL_KINDS};
  CREATE INDEX car_events_by_agent ON car_events ((${DATA} ->> 'agent_id'), seq) WHERE ${POSTURE_KINDS};
`;

/** Whether the log was cut (a checkpoint exists); false while the backend keeps no checkpoints. */
export const LOG_CUT = "EXISTS (SELECT 1 FROM car_checkpoints)";

const APPROVALS_OF = `SELECT
  (SELECT coalesce(json_agg(x ORDER BY x.id), '[]'::json) FROM (
     SELECT a.id, a.record, r.revoked_at, r.revoked_by, a.seal FROM car_approvals a LEFT JOIN car_revocations r ON r.approval_id = a.id
     WHERE a.fingerprint = $1) x) AS rows,
  (SELECT coalesce(json_agg(h), '[]'::json) FROM (
     SELECT DISTINCT ON (approval_id) (${DATA} ->> 'approval_id')::bigint AS approval_id, kind, (body::jsonb) ->> 'timestamp' AS stamp,
       ${DATA} ->> 'revoked_by' AS revoked_by
     FROM car_events WHERE (${DATA} ->> 'fingerprint') = $1 AND ${APPROVAL_KINDS} ORDER BY approval_id, seq DESC) h) AS heads,
  ${LOG_CUT} AS cut`;

const POSTURES_OF = `SELECT
  (SELECT coalesce(json_agg(x), '[]'::json) FROM (SELECT agent_id, tier, posture, updated_at, seal FROM car_postures WHERE agent_id = $1) x) AS rows,
  (SELECT coalesce(json_agg(e ORDER BY e.seq), '[]'::json) FROM (
     SELECT seq, kind, ${DATA} ->> 'tier' AS tier, (body::jsonb) ->> 'timestamp' AS stamp, ${DATA} ->> 'posture' AS posture
     FROM car_events WHERE (${DATA} ->> 'agent_id') = $1 AND ${POSTURE_KINDS}) e) AS events,
  ${LOG_CUT} AS cut`;

type Sealed<R> = R & { seal: string | null };

/** The approval rows of `fingerprint` (by id) and the newest event of each approval id, in one snapshot. */
export async function approvalsWithHeads(query: ReadQuery, fingerprint: string): Promise<{ rows: Sealed<ApprovalRow>[]; heads: ApprovalHead[]; cut: boolean }> {
  const { rows } = await query<{ rows: Sealed<ApprovalRow>[]; heads: (Omit<ApprovalHead, "at"> & { stamp: string })[]; cut: boolean }>(APPROVALS_OF, [
    fingerprint,
  ]);
  const [answer] = rows;
  return {
    rows: answer!.rows,
    heads: answer!.heads.map(({ stamp, ...h }) => ({ ...h, at: Date.parse(stamp) })),
    cut: answer!.cut,
  };
}

/** The posture rows of `agent_id` and its posture events (oldest first), in one snapshot. */
export async function posturesWithEvents(query: ReadQuery, agent_id: string): Promise<{ rows: Sealed<PostureRow>[]; events: PostureEvent[]; cut: boolean }> {
  const { rows } = await query<{ rows: Sealed<PostureRow>[]; events: (Omit<PostureEvent, "at"> & { stamp: string })[]; cut: boolean }>(POSTURES_OF, [agent_id]);
  const [answer] = rows;
  return { rows: answer!.rows, events: answer!.events.map(({ stamp, ...e }) => ({ ...e, at: Date.parse(stamp) })), cut: answer!.cut };
}
