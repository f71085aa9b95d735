/**
 * Row currency: a seal (row-seal.ts) proves CAR wrote a row, not that it is
 * the row CAR wrote last. An older copy of an approval (more uses left, not
 * yet revoked) still carries its old, valid seal, and so does a posture
 * before its change; deleting a row leaves no seal to check at all.
 *
 * So every run-time read of the rows a gate trusts also reads, in the same
 * snapshot, the newest chained event about each of them — per fingerprint
 * for approvals, per agent for postures, through an index on the log — and
 * refuses (`chain_broken`) rows that are not what those events left: a
 * restored copy, a deleted revocation, a deleted row, a row no event made.
 * Events are written in the transaction that changes the row, so an honest
 * store never disagrees with itself.
 *
 * What this does not see: the newest events removed or rewritten as well.
 * That breaks the chain, which `car audit verify` (and anchors, for a cut
 * tail) report; this check reads only the events of one key, not the chain.
 * After a log cut, a row whose events were all removed is taken here on its
 * seal; `car audit verify` checks it against the digest the cut's signed
 * checkpoint recorded of it (cut-rows.ts).
 */
import { CarError } from "@car/ir";
import { type ApprovalRow, SPENT_BY } from "./approval-rows.ts";
import { ALL_TIERS, type PostureRow } from "./posture-rows.ts";

/** The newest `approval_recorded` / `approval_used` / `approval_revoked` event of one approval id. */
export interface ApprovalHead {
  approval_id: number;
  kind: string;
  /** The event's time, in milliseconds since the epoch. */
  at: number;
  /** `approval_revoked`'s `revoked_by`; null otherwise. */
  revoked_by: string | null;
}

/** One `posture_set` / `posture_cleared` event of one agent, oldest first. */
export interface PostureEvent {
  kind: string;
  tier: string;
  /** Milliseconds since the epoch. */
  at: number;
  /** `posture_set`'s posture; null for a clear. */
  posture: string | null;
}

/** Refuses `rows` unless each is what the log's newest event about it left (see above). */
export function requireCurrentApprovals(heads: readonly ApprovalHead[], rows: readonly ApprovalRow[], logCut: boolean): void {
  const problem = staleApproval(heads, rows, logCut);
  if (problem !== undefined) throw staleRow("approvals", problem);
}

/** Refuses the posture rows of one agent unless they are what its chained events left. */
export function requireCurrentPostures(agent_id: string, events: readonly PostureEvent[], rows: readonly PostureRow[], logCut: boolean): void {
  const problem = stalePosture(agent_id, events, rows, logCut);
  if (problem !== undefined) throw staleRow("postures", problem);
}

function staleRow(table: "approvals" | "postures", problem: string): CarError {
  return new CarError("chain_broken", `${problem}: the ${table} table was changed outside CAR, so it is not honoured; run car audit verify`, { table });
}

/** The first approval row the heads do not vouch for, said in words; undefined when all agree. */
export function staleApproval(heads: readonly ApprovalHead[], rows: readonly ApprovalRow[], logCut: boolean): string | undefined {
  const byId = new Map(heads.map((h) => [h.approval_id, h]));
  for (const row of rows) {
    const head = byId.get(row.id);
    byId.delete(row.id);
    if (head === undefined) {
      if (logCut) continue;
      return `approval ${row.id} has no event in the log (a row inserted or restored outside CAR)`;
    }
    const spent = head.kind === "approval_used";
    const want = head.kind === "approval_recorded" ? null : { at: head.at, by: spent ? SPENT_BY : head.revoked_by };
    if (want === null && row.revoked_at === null) continue;
    if (want !== null && row.revoked_at === want.at && row.revoked_by === want.by) continue;
    if (want === null) return `approval ${row.id} is revoked in its row, but the log's newest event about it records it in force`;
    if (row.revoked_at === null)
      return `approval ${row.id} was ${spent ? "spent" : "revoked"} (the log says so) but its row is in force: an older copy restored, or its revocation deleted`;
    return `approval ${row.id}'s revocation is not the one the log records`;
  }
  const [gone] = byId.keys();
  return gone === undefined ? undefined : `approval ${gone} is in the log but its row is gone`;
}

/** The first posture row of `agent_id` its events (oldest first) do not vouch for; undefined when all agree. */
export function stalePosture(agent_id: string, events: readonly PostureEvent[], rows: readonly PostureRow[], logCut: boolean): string | undefined {
  // Per tier: what the newest event left (null: cleared); `allCleared`: a clear of every tier, after which an unnamed tier is gone too.
  const cells = new Map<string, { posture: string; at: number } | null>();
  let allCleared = false;
  for (const e of events) {
    if (e.kind === "posture_set" && e.posture !== null) cells.set(e.tier, { posture: e.posture, at: e.at });
    else if (e.kind === "posture_cleared" && e.tier !== ALL_TIERS) cells.set(e.tier, null);
    else if (e.kind === "posture_cleared") {
      for (const tier of cells.keys()) cells.set(tier, null);
      allCleared = true;
    }
  }
  const where = (tier: string): string => `the posture of '${agent_id}' for tier ${tier}`;
  for (const row of rows) {
    const cell = cells.get(row.tier);
    cells.delete(row.tier);
    if (cell === undefined && !allCleared && logCut) continue;
    if (cell === undefined || cell === null)
      return `${where(row.tier)} is ${row.posture}, but the log ${cell === null || allCleared ? "cleared it" : "never set it"}`;
    if (cell.posture !== row.posture || cell.at !== row.updated_at)
      return `${where(row.tier)} is ${row.posture} (of ${row.updated_at}), but the log's newest change set ${cell.posture} (at ${cell.at}): an older copy restored`;
  }
  for (const [tier, cell] of cells) if (cell !== null) return `${where(tier)} is in the log but its row is gone`;
  return undefined;
}
