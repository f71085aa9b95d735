/**
 * What a cut of the log keeps proving about the tables it trusts. Before a
 * cut, every row of `approvals`, `postures`, `proposals` and `transitions`
 * is checked against the chained events that made it (table-replay.ts).
 * A cut removes those events, and a row whose events were all removed
 * would then be vouched for by nothing but its seal — and `proposals` and
 * `transitions` rows carry none, while an older approval or posture row
 * carries an old, valid one.
 *
 * So a cut records a digest of every row group no retained event touches
 * (per approval id, posture cell, proposal id and state key): the last
 * version the log proved before it was cut. The record is kept beside the
 * log (the store's meta table, the newest cut's only) and its own digest is
 * in the cut's signed checkpoint (`rows_digest`), so the checkpoint stays
 * small and a changed record is a break. At verification each group still
 * untouched by the retained log must match the record; one missing is a
 * deleted row, one the record does not name an inserted one. A group a
 * retained event touches changed on the record after the cut and is
 * checked, as before, by its seal only.
 *
 * The record grows with the tables (one digest per group), written once
 * per cut and read once per verification.
 */
import { canonicalJson } from "@car/ir";
import type { JsonValue } from "@car/ir";
import type { CarEvent } from "../events/event.ts";
import { EVENT_KINDS } from "../events/event.ts";
import { compensationRunId } from "../compensation/compensation-phase.ts";
import type { SignedCheckpoint } from "./checkpoint.ts";
import { sha256Hex } from "./event-hash.ts";
import { ALL_TIERS } from "./posture-rows.ts";
import { approvalSealRow, postureSealRow } from "./row-seal.ts";
import type { StoredTables, TableBreak } from "./table-replay.ts";

type TrustedTable = "approvals" | "postures" | "proposals" | "transitions";

const TABLES: readonly TrustedTable[] = ["approvals", "postures", "proposals", "transitions"];

/** Per table, a digest of each row group no retained event touched at the cut, by the group's key. */
export type CutRows = Record<TrustedTable, Record<string, string>>;

/** Each table's row groups: the group's key (approval id, JSON `[agent, tier]`, proposal id, state key) and its rows in stored order. */
function rowGroups(tables: StoredTables): Record<TrustedTable, Map<string, JsonValue[]>> {
  const groups = { approvals: new Map(), postures: new Map(), proposals: new Map(), transitions: new Map() } as Record<TrustedTable, Map<string, JsonValue[]>>;
  const add = (table: TrustedTable, key: string, row: JsonValue): void => {
    const list = groups[table].get(key);
    if (list === undefined) groups[table].set(key, [row]);
    else list.push(row);
  };
  for (const r of tables.approvals) add("approvals", String(r.id), approvalSealRow(r.id, r.record, r.revoked_at, r.revoked_by));
  for (const r of tables.postures) add("postures", postureCell(r.agent_id, r.tier), postureSealRow(r.agent_id, r.tier, r.posture, r.updated_at));
  for (const r of tables.proposals.rows) add("proposals", r.proposal_id, r.status);
  for (const r of tables.transitions ?? [])
    add("transitions", r.key, {
      key: r.key,
      mutation: r.mutation,
      previous_version: r.previous_version,
      version: r.version,
      proposal_id: r.proposal_id,
      action_id: r.action_id,
    });
  return groups;
}

function postureCell(agent_id: string, tier: string): string {
  return JSON.stringify([agent_id, tier]);
}

/** Whether a retained event touches a row group: then the group changed on the record and is not held to a cut's digest. */
type Touches = (table: TrustedTable, key: string) => boolean;

function touchedBy(events: readonly CarEvent[]): Touches {
  const touched = { approvals: new Set<string>(), postures: new Set<string>(), proposals: new Set<string>(), transitions: new Set<string>() };
  const agentsCleared = new Set<string>();
  for (const e of events) {
    if (e.proposal_id !== null) {
      touched.proposals.add(e.proposal_id);
      touched.proposals.add(compensationRunId(e.proposal_id));
    }
    const { approval_id, agent_id, tier, key } = e.data;
    if (e.kind.startsWith("approval_") && typeof approval_id === "number") touched.approvals.add(String(approval_id));
    if ((e.kind === "posture_set" || e.kind === "posture_cleared") && typeof agent_id === "string") {
      if (tier === ALL_TIERS) agentsCleared.add(agent_id);
      else touched.postures.add(postureCell(agent_id, String(tier)));
    }
    if (e.kind === EVENT_KINDS.stateChanged && typeof key === "string") touched.transitions.add(key);
  }
  return (table, key) => touched[table].has(key) || (table === "postures" && agentsCleared.has((JSON.parse(key) as string[])[0]!));
}

const digestOf = (rows: JsonValue[]): string => sha256Hex(canonicalJson(rows));

/** Where a store keeps the newest cut's record, in its meta table. */
export const CUT_ROWS_KEY = "cut_rows";

/** The stored record read back; null when there is none. Text that is no record reads as an empty one, which no checkpoint signed. */
export function parseCutRows(text: string | null | undefined): CutRows | null {
  if (text === null || text === undefined) return null;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as CutRows;
  } catch {
    // Falls through to the empty record.
  }
  return {} as CutRows;
}

/** What a cut's checkpoint signs of its record of the rows. */
export function cutRowsDigest(rows: CutRows): string {
  return sha256Hex(canonicalJson(rows as unknown as JsonValue));
}

/**
 * What a cut commits to: the digest of each row group that none of
 * `retained` (the events the cut keeps, oldest first) touches — the groups
 * whose events the cut removes, or that never had any.
 */
export function cutRows(tables: StoredTables, retained: readonly CarEvent[]): CutRows {
  const touches = touchedBy(retained);
  const groups = rowGroups(tables);
  const rows = {} as CutRows;
  for (const table of TABLES)
    rows[table] = Object.fromEntries([...groups[table]].filter(([key]) => !touches(table, key)).map(([key, list]) => [key, digestOf(list)]));
  return rows;
}

/**
 * The first row group untouched by `retained` (the verified log after the
 * newest cut) that is not what the newest cut recorded (`tables.cut_rows`,
 * which must be the record its checkpoint signed); undefined when all are.
 * Only the newest cut counts: it recorded every group its retained events
 * did not touch, and the retained log now holds those events and newer
 * ones, so a group untouched now was recorded by it — or did not exist
 * then. A newest cut written before cuts recorded their rows proves
 * nothing here.
 */
export function cutRowsBreak(checkpoints: readonly SignedCheckpoint[], tables: StoredTables, retained: readonly CarEvent[]): TableBreak | undefined {
  const newest = checkpoints.at(-1)?.checkpoint;
  if (newest?.rows_digest === undefined) return undefined;
  const record = tables.cut_rows;
  if (record === undefined || record === null) return { table: "checkpoints", reason: `the record of the rows the cut of ${newest.created_at} left is gone` };
  if (cutRowsDigest(record) !== newest.rows_digest)
    return {
      table: "checkpoints",
      reason: `the record of the rows the cut of ${newest.created_at} left is not the one its checkpoint signed: edited outside CAR`,
    };
  const touches = touchedBy(retained);
  const groups = rowGroups(tables);
  for (const table of TABLES) {
    const recorded = new Map(Object.entries(record[table] ?? {}));
    for (const [key, list] of groups[table]) {
      if (touches(table, key)) continue;
      const want = recorded.get(key);
      recorded.delete(key);
      // A run begun whose events are not written yet (PostgreSQL keeps one row per proposal id, `executing` meanwhile).
      if (table === "proposals" && tables.proposals.per === "proposal" && list[0] === "executing") continue;
      if (want === undefined)
        return {
          table,
          reason: `${groupName(table, key)} has no event in the log and the cut of ${newest.created_at} does not record it: inserted outside CAR`,
        };
      if (want !== digestOf(list))
        return {
          table,
          reason: `${groupName(table, key)} is not what the cut of ${newest.created_at} recorded when it removed its events: edited outside CAR`,
        };
    }
    for (const key of recorded.keys())
      if (!touches(table, key)) return { table, reason: `${groupName(table, key)} is recorded by the cut of ${newest.created_at} but its row is gone` };
  }
  return undefined;
}

/** A row group in words. */
function groupName(table: TrustedTable, key: string): string {
  if (table === "approvals") return `approval ${key}`;
  if (table === "proposals") return `proposal '${key}'`;
  if (table === "transitions") return `the transitions of key '${key}'`;
  const [agent, tier] = JSON.parse(key) as [string, string];
  return `the posture of '${agent}' for tier ${tier}`;
}
