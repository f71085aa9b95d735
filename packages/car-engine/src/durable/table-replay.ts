/**
 * The audit covers every table it trusts. Beside the state, a durable store
 * keeps tables the runtime reads: the approval ledger, postures, the
 * proposals' statuses and the transition record. None is chained itself;
 * instead every row is checked against the chained events that made it —
 * the simpler sound design, because each write to these tables already
 * appends its event in the same transaction (`approval_recorded`,
 * `approval_used`, `approval_revoked`, `posture_set`, `posture_cleared`,
 * `proposal_received`/`proposal_completed`/`proposal_interrupted`,
 * `state_changed`), so the log alone says what each table must hold, and a
 * second chain would only say it twice. Replaying the verified log and
 * comparing finds a forged, edited or deleted row alike.
 *
 * After a cut removed events the log no longer says what every row must
 * be; then the row seals (row-seal.ts) are checked, and each row group no
 * retained event touches against the digest the cut recorded of it (its
 * record signed by the cut's checkpoint; cut-rows.ts).
 */
import { jsonEquals } from "@car/ir";
import type { JsonObject, JsonValue } from "@car/ir";
import type { CarEvent } from "../events/event.ts";
import { EVENT_KINDS } from "../events/event.ts";
import { compensationRunId } from "../compensation/compensation-phase.ts";
import { COMPENSATION_EVENTS } from "../events/event-kinds.ts";
import { type ApprovalRow, SPENT_BY } from "./approval-rows.ts";
import type { SignedCheckpoint } from "./checkpoint.ts";
import { type CutRows, cutRowsBreak } from "./cut-rows.ts";
import type { AuditKey } from "./event-mac.ts";
import { ALL_TIERS, type PostureRow } from "./posture-rows.ts";
import { approvalSealRow, postureSealRow, sealMatches } from "./row-seal.ts";
import { appliedStateChanges } from "./state-replay.ts";

/** One stored `proposals` row: whose run, in what status. */
export interface ProposalRow {
  proposal_id: string;
  status: string;
}

/** One stored transition (`mutation` parsed). */
export interface TransitionRow {
  key: string;
  mutation: JsonValue;
  previous_version: number;
  version: number;
  proposal_id: string | null;
  action_id: string | null;
}

/** The tables as a backend read them, in their stored order, each row with its seal where it has one. */
export interface StoredTables {
  approvals: readonly (ApprovalRow & { seal: string | null })[];
  postures: readonly (PostureRow & { seal: string | null })[];
  /**
   * `run`: one row per run, in the order the runs began (SQLite).
   * `proposal`: one row per proposal id, its latest run (PostgreSQL), where
   * `executing` stands for a run begun whose events are not written yet.
   */
  proposals: { per: "run" | "proposal"; rows: readonly ProposalRow[] };
  /** Absent for a backend that keeps no transition record of its own (every durable store here keeps one). */
  transitions?: readonly TransitionRow[];
  /** The newest cut's record of the rows (cut-rows.ts), as stored beside the log; null when there is none. */
  cut_rows?: CutRows | null;
}

/** The first table row that the log (or its seal) does not vouch for. */
export interface TableBreak {
  /** `checkpoints`: the cut's record of the rows is not the one its checkpoint signed. */
  table: "approvals" | "postures" | "proposals" | "transitions" | "checkpoints";
  reason: string;
}

/**
 * The first row that does not agree with the log; undefined when every one
 * does. `events`: the verified log (after the newest cut, if any);
 * `checkpoints`: every cut's checkpoint, oldest first (when there is one,
 * the log no longer replays to every row: seals and the cut's record of
 * the rows are checked). `key`: the audit key the seals are under.
 */
export function tableBreak(
  events: readonly CarEvent[],
  checkpoints: readonly SignedCheckpoint[],
  tables: StoredTables,
  key: AuditKey | undefined,
): TableBreak | undefined {
  return sealBreak(tables, key) ?? (checkpoints.length > 0 ? cutRowsBreak(checkpoints, tables, events) : replayBreak(events, tables));
}

/**
 * The first row the whole verified log does not vouch for, seals aside:
 * what a store checks before it seals rows written before seals existed.
 */
export function replayBreak(events: readonly CarEvent[], tables: StoredTables): TableBreak | undefined {
  return (
    approvalsBreak(events, tables.approvals) ??
    posturesBreak(events, tables.postures) ??
    proposalsBreak(events, tables.proposals) ??
    (tables.transitions === undefined ? undefined : transitionsBreak(events, tables.transitions))
  );
}

function sealBreak(tables: StoredTables, key: AuditKey | undefined): TableBreak | undefined {
  for (const row of tables.approvals) {
    if (!sealMatches(key, "approvals", approvalSealRow(row.id, row.record, row.revoked_at, row.revoked_by), row.seal))
      return { table: "approvals", reason: `approval ${row.id} does not match its seal: the row (or its revocation) was written or edited outside CAR` };
  }
  for (const row of tables.postures) {
    if (!sealMatches(key, "postures", postureSealRow(row.agent_id, row.tier, row.posture, row.updated_at), row.seal))
      return {
        table: "postures",
        reason: `the posture of '${row.agent_id}' for tier ${row.tier} does not match its seal: it was written or edited outside CAR`,
      };
  }
  return undefined;
}

/** The record an `approval_recorded` event says was stored. */
function recordOf(event: CarEvent): JsonObject {
  const { approval_id: _id, ...fields } = event.data;
  const record: JsonObject = { ...fields, decided_at: Date.parse(event.timestamp) };
  if (event.action_id !== undefined) record["action_id"] = event.action_id;
  return record;
}

function approvalsBreak(events: readonly CarEvent[], rows: readonly ApprovalRow[]): TableBreak | undefined {
  const recorded = new Map<number, JsonObject>();
  const revoked = new Map<number, { at: number; by: string }>();
  for (const e of events) {
    const id = e.data["approval_id"];
    if (typeof id !== "number") continue;
    if (e.kind === "approval_recorded") recorded.set(id, recordOf(e));
    else if (e.kind === "approval_used") revoked.set(id, { at: Date.parse(e.timestamp), by: SPENT_BY });
    else if (e.kind === "approval_revoked") revoked.set(id, { at: Date.parse(e.timestamp), by: String(e.data["revoked_by"]) });
  }
  const fail = (reason: string): TableBreak => ({ table: "approvals", reason });
  for (const row of rows) {
    const want = recorded.get(row.id);
    if (want === undefined) return fail(`approval ${row.id} has no approval_recorded event in the log: the row was inserted outside CAR`);
    recorded.delete(row.id);
    let have: unknown;
    try {
      have = JSON.parse(row.record);
    } catch {
      have = undefined;
    }
    if (!jsonEquals(have, want)) return fail(`approval ${row.id} is not the decision its approval_recorded event records: the row was edited`);
    const revocation = revoked.get(row.id);
    const stored = row.revoked_at === null ? undefined : { at: row.revoked_at, by: row.revoked_by };
    if (revocation?.at !== stored?.at || revocation?.by !== stored?.by)
      return fail(
        stored === undefined
          ? `approval ${row.id} was revoked or spent (the log says so) but its revocation row is gone`
          : `approval ${row.id}'s revocation is not the one the log records`,
      );
  }
  const [missing] = recorded.keys();
  return missing === undefined ? undefined : fail(`approval ${missing} is in the log but its row is gone`);
}

function posturesBreak(events: readonly CarEvent[], rows: readonly PostureRow[]): TableBreak | undefined {
  const want = new Map<string, { posture: unknown; updated_at: number }>();
  const cell = (agent: unknown, tier: unknown): string => JSON.stringify([agent, tier]);
  for (const e of events) {
    if (e.proposal_id !== null) continue;
    const { agent_id, tier } = e.data;
    if (e.kind === "posture_set") want.set(cell(agent_id, tier), { posture: e.data["posture"], updated_at: Date.parse(e.timestamp) });
    else if (e.kind === "posture_cleared") {
      if (tier !== ALL_TIERS) want.delete(cell(agent_id, tier));
      else for (const k of [...want.keys()]) if ((JSON.parse(k) as unknown[])[0] === agent_id) want.delete(k);
    }
  }
  for (const row of rows) {
    const expected = want.get(cell(row.agent_id, row.tier));
    want.delete(cell(row.agent_id, row.tier));
    if (expected === undefined || expected.posture !== row.posture || expected.updated_at !== row.updated_at)
      return {
        table: "postures",
        reason: `the posture of '${row.agent_id}' for tier ${row.tier} is ${row.posture}, but the log ${expected === undefined ? "never set it" : `set ${String(expected.posture)}`}`,
      };
  }
  const [missing] = want.keys();
  if (missing === undefined) return undefined;
  const [agent, tier] = JSON.parse(missing) as [string, string];
  return { table: "postures", reason: `the posture of '${agent}' for tier ${tier} is in the log but its row is gone` };
}

/**
 * Each run id's runs, oldest first, in the status the log leaves them. A
 * compensation phase is a run of its own (`<id>#compensation`) whose events
 * carry the proposal's id: `compensation_planned` begins it and
 * `compensation_completed` ends it; a resumed phase begins with no event,
 * so a completion after an interruption is a run of its own.
 */
function replayRuns(events: readonly CarEvent[]): Map<string, string[]> {
  const runs = new Map<string, string[]>();
  const list = (id: string): string[] => {
    let l = runs.get(id);
    if (l === undefined) runs.set(id, (l = []));
    return l;
  };
  /** Ends the open run of `id` as `status`, or records a run that left no begin event. */
  const end = (id: string, status: string): void => {
    const l = list(id);
    if (l.at(-1) === "executing") l[l.length - 1] = status;
    else l.push(status);
  };
  for (const e of events) {
    if (e.proposal_id === null) continue;
    if (e.kind === EVENT_KINDS.proposalReceived) list(e.proposal_id).push("executing");
    else if (e.kind === EVENT_KINDS.proposalCompleted && typeof e.data["outcome"] === "string") {
      // A refused commit completes a second time: the last word wins.
      const l = list(e.proposal_id);
      if (l.length === 0) l.push(e.data["outcome"]);
      else l[l.length - 1] = e.data["outcome"];
    } else if (e.kind === EVENT_KINDS.proposalInterrupted) end(e.proposal_id, "interrupted");
    else if (e.kind === COMPENSATION_EVENTS.planned) list(compensationRunId(e.proposal_id)).push("executing");
    else if (e.kind === COMPENSATION_EVENTS.completed) end(compensationRunId(e.proposal_id), "committed");
  }
  return runs;
}

function proposalsBreak(events: readonly CarEvent[], proposals: StoredTables["proposals"]): TableBreak | undefined {
  const runs = replayRuns(events);
  const stored = new Map<string, string[]>();
  for (const row of proposals.rows) {
    const list = stored.get(row.proposal_id) ?? [];
    list.push(row.status);
    stored.set(row.proposal_id, list);
  }
  const fail = (id: string, have: readonly string[], want: readonly string[] | undefined): TableBreak => ({
    table: "proposals",
    reason: `proposal '${id}' is stored as ${have.join(", ") || "absent"}, but the log says ${want === undefined || want.length === 0 ? "it never ran" : want.join(", ")}`,
  });
  for (const [id, have] of stored) {
    const want = runs.get(id);
    runs.delete(id);
    if (proposals.per === "run") {
      if (want === undefined || !jsonEquals(have, want)) return fail(id, have, want);
    } else if (have[0] !== "executing" && have[0] !== want?.at(-1)) return fail(id, have, want);
  }
  const [missing] = runs.keys();
  return missing === undefined ? undefined : fail(missing, [], runs.get(missing));
}

/**
 * The transitions the log says a store recorded, in log order: one per
 * applied `state_changed`, except a delete of an absent key, which changes
 * nothing, bumps no version and leaves no transition (as `StateStore.delete`
 * returns null for it) — on every store alike.
 */
export function expectedTransitions(events: readonly CarEvent[]): TransitionRow[] {
  const want: TransitionRow[] = [];
  const versions = new Map<string, number>();
  const present = new Set<string>();
  for (const change of appliedStateChanges(events)) {
    const key = change.data["key"] as string;
    const op = change.data["op"];
    if (op === "delete" && !present.delete(key)) continue;
    if (op !== "delete") present.add(key);
    const previous = versions.get(key) ?? 0;
    versions.set(key, previous + 1);
    want.push({
      key,
      mutation: op === "delete" ? { op: "delete" } : { op: "set", value: change.data["value"] as JsonValue },
      previous_version: previous,
      version: previous + 1,
      proposal_id: change.proposal_id,
      action_id: change.proposal_id === null ? null : (change.action_id ?? null),
    });
  }
  return want;
}

/** Rows grouped by key, each key's rows in the order given. */
function perKey(rows: readonly TransitionRow[]): Map<string, TransitionRow[]> {
  const out = new Map<string, TransitionRow[]>();
  for (const row of rows) {
    const list = out.get(row.key);
    if (list === undefined) out.set(row.key, [row]);
    else list.push(row);
  }
  return out;
}

/**
 * Compared key by key: each key's rows in the store's order against that
 * key's changes in log order. Only the order per key is defined: a store's
 * writes to one key are serialised by its row lock, and so are their places
 * in the log, but commits to different keys may take their row ids in one
 * order and their log places in the other (PostgreSQL numbers a row at
 * insert, the log at commit).
 */
function transitionsBreak(events: readonly CarEvent[], rows: readonly TransitionRow[]): TableBreak | undefined {
  const want = perKey(expectedTransitions(events));
  const have = perKey(rows);
  for (const key of new Set([...have.keys(), ...want.keys()])) {
    const stored = have.get(key) ?? [];
    const expected = want.get(key) ?? [];
    for (let i = 0; i < Math.max(stored.length, expected.length); i++) {
      const row = stored[i];
      if (row !== undefined && expected[i] !== undefined && jsonEquals(row, expected[i])) continue;
      return {
        table: "transitions",
        reason:
          row === undefined
            ? `transition ${i + 1} of key '${key}' is in the log but its row is gone`
            : `transition ${i + 1} of key '${key}' is not the change the log records: the row was ${expected[i] === undefined ? "inserted" : "edited"} outside CAR`,
      };
    }
  }
  return undefined;
}
