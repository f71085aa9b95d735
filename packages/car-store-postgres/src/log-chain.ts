/**
 * The audit log's hash chain on PostgreSQL: one chain across every runtime,
 * in commit order. A transaction appends its events through
 * `car_append_events`, which locks the log head (`car_log_head`), numbers
 * the events after it, hashes them and moves the head — all in one call,
 * the transaction's last before COMMIT, so the head is locked only from
 * there to the commit while everything before it (key locks, checks, state
 * writes) runs in parallel across runtimes. Because `seq`s are handed out
 * under that lock, the visible log is always a gap-free prefix: a reader
 * resuming after `seq` N never misses an event, and each proposal's events
 * form one contiguous, linked run.
 *
 * The client builds each event's canonical text with the shared helper and
 * sends it in three parts around `prev_hash` and `seq`; the call reports the
 * seqs and hashes it gave, which the client sets on its event objects.
 * With the audit key, the client adds each event's MAC (event-mac.ts) in
 * the same transaction, after the call returned the hashes — the key never
 * reaches the database. Verification is the shared `ChainVerifier` over the
 * whole log, against the recorded head (a removed tail is found too), then
 * the anchors, the tables the runtime trusts (table-replay.ts) and the
 * replayed state.
 */
import type { Pool, PoolClient } from "pg";
import type { CarEvent } from "@car/engine";
import {
  type Anchor,
  anchorBreak,
  anchorSummary,
  type AuditKey,
  canonicalEventParts,
  type ChainOptions,
  type ChainReport,
  ChainVerifier,
  type DatabaseIdentity,
  CUT_ROWS_KEY,
  eventMac,
  parseCutRows,
  type SignedCheckpoint,
  replayBreak,
  type StoredTables,
  tableBreak,
  firstStateDifference,
  replayStateChanges,
} from "@car/engine/durable";
import type { JsonValue } from "@car/ir";
import { emptyMap, setOwn } from "@car/ir";
import { approvalRows } from "./approval-ledger.ts";
import type { ReadQuery } from "./audited-transaction.ts";
import { eventFromRow, sqlLiteral } from "./event-sql.ts";
import { transitionRows } from "./transition-record.ts";
import { checkpointKeyOf, storedCheckpoints } from "./log-cuts.ts";
import { postureRows } from "./posture-store.ts";
import type { EventRow } from "./event-sql.ts";

/**
 * The arguments of `car_append_events` for `events`: each event's canonical
 * text in three parts around the `prev_hash` and `seq` values, which the
 * function writes between them (`head`, the previous hash in quotes, `mid`,
 * the seq, `tail`).
 */
function appendArguments(events: readonly CarEvent[]): (string | null)[][] {
  const n = events.length;
  const proposals = new Array<string | null>(n);
  const actions = new Array<string | null>(n);
  const kinds = new Array<string>(n);
  const stamps = new Array<string>(n);
  const heads = new Array<string>(n);
  const mids = new Array<string>(n);
  const tails = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    const event = events[i]!;
    const [head, mid, tail] = canonicalEventParts(event);
    // The function quotes neither value: the parts carry the quotes around the hash.
    heads[i] = `${head}"`;
    mids[i] = `"${mid}`;
    tails[i] = tail;
    proposals[i] = event.proposal_id;
    actions[i] = event.action_id ?? null;
    kinds[i] = event.kind;
    stamps[i] = event.timestamp;
  }
  return [proposals, actions, kinds, stamps, heads, mids, tails];
}

function textArray(values: readonly (string | null)[]): string {
  return `ARRAY[${values.map((v) => (v === null ? "NULL" : sqlLiteral(v))).join(",")}]::text[]`;
}

/** The `car_append_events` call for `events` with its arguments inlined (for a multi-statement query). */
export function appendStatement(events: readonly CarEvent[]): string {
  return `SELECT ${RETURNED} FROM car_append_events(${appendArguments(events).map(textArray).join(", ")})`;
}

const RETURNED = "first_seq::text, linked_to, hashes";

/** What `car_append_events` returns. */
export interface Appended {
  first_seq: string;
  linked_to: string;
  hashes: string[];
}

/** Sets `seq`, `prev_hash` and `hash` on the appended events from what `car_append_events` returned. */
export function linkAppended(events: readonly CarEvent[], appended: Appended): void {
  let seq = Number(appended.first_seq);
  let prev = appended.linked_to;
  events.forEach((event, i) => {
    event.seq = seq++;
    event.prev_hash = prev;
    prev = event.hash = appended.hashes[i]!;
  });
}

/** The statement storing each (already linked) event's MAC under `key`. */
export function macStatement(events: readonly CarEvent[], key: AuditKey): string {
  const seqs = events.map((e) => e.seq).join(",");
  const macs = events.map((e) => `'${eventMac(key, e.hash!)}'`).join(",");
  return `UPDATE car_events AS e SET mac = m.mac FROM unnest(ARRAY[${seqs}]::bigint[], ARRAY[${macs}]::text[]) AS m(seq, mac) WHERE e.seq = m.seq`;
}

/** Appends `events` at the end of the log inside the caller's transaction (setting their `seq` and hashes, and their MACs under `key`). */
export async function appendToLog(client: PoolClient, events: readonly CarEvent[], key: AuditKey | undefined): Promise<void> {
  if (events.length === 0) return;
  const { rows } = await client.query<Appended>(`SELECT ${RETURNED} FROM car_append_events($1, $2, $3, $4, $5, $6, $7)`, appendArguments(events));
  linkAppended(events, rows[0]!);
  if (key !== undefined) await client.query(macStatement(events, key));
}

const PAGE = 2000;

/**
 * Verifies the whole log (stopping at the first broken link), then that
 * every anchor of this database holds, then that every table the runtime
 * trusts is what the log says, then that `car_state` equals the state the
 * log replays to. Reads in one REPEATABLE READ transaction, so
 * concurrent commits cannot make the log and the state disagree.
 */
export async function verifyLog(
  pool: Pool,
  key: AuditKey | undefined,
  self: DatabaseIdentity,
  anchors: readonly Anchor[] | undefined,
  options: ChainOptions = {},
): Promise<ChainReport> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    const report = await verifyIn(client, key, self, anchors, options);
    await client.query("COMMIT");
    return report;
  } finally {
    await client.query("ROLLBACK").catch(() => {});
    client.release();
  }
}

/** The whole log, verified: the report so far and the events read (all of them when it is ok). */
async function readVerifiedLog(
  client: PoolClient,
  key: AuditKey | undefined,
): Promise<{ report: ChainReport; events: CarEvent[]; head: { seq: string; hash: string }; cutThrough: number; checkpoints: SignedCheckpoint[] }> {
  const head = (await client.query<{ seq: string; hash: string }>("SELECT seq::text, hash FROM car_log_head WHERE id = 1")).rows[0]!;
  const checkpoints = await storedCheckpoints(client);
  const cutThrough = checkpoints.at(-1)?.checkpoint.seq ?? 0;
  const verifier = new ChainVerifier(checkpoints, checkpoints.length > 0 ? await checkpointKeyOf(client, key, false) : undefined, key);
  const events: CarEvent[] = [];
  let after = cutThrough;
  for (;;) {
    const { rows } = await client.query<EventRow>(`SELECT body, hash, mac FROM car_events WHERE seq > $1 ORDER BY seq LIMIT ${PAGE}`, [after]);
    for (const row of rows) {
      let event: CarEvent;
      try {
        event = eventFromRow(row);
      } catch {
        verifier.check({ event: { seq: after + 1, kind: "", proposal_id: null, timestamp: "", data: {} }, problem: "the stored event is not JSON" });
        return { report: verifier.finish(), events, head, cutThrough, checkpoints };
      }
      after = event.seq;
      if (!verifier.check({ event, stored: row.body, mac: row.mac ?? null })) return { report: verifier.finish(), events, head, cutThrough, checkpoints };
      events.push(event);
    }
    if (rows.length < PAGE) break;
  }
  // A log cut through its head (events.clear) has no events left; the checkpoint names the head.
  const expected = Number(head.seq) === cutThrough ? null : { seq: Number(head.seq), hash: head.hash };
  return { report: verifier.finish(expected), events, head, cutThrough, checkpoints };
}

/** The tables verification checks against the log, read in `client`'s transaction. */
export async function storedTables(client: PoolClient): Promise<StoredTables> {
  const read: ReadQuery = (sql, params) => client.query(sql, params === undefined ? [] : [...params]);
  const proposals = (await client.query<{ proposal_id: string; status: string }>("SELECT proposal_id, status FROM car_proposals ORDER BY proposal_id")).rows;
  return {
    approvals: await approvalRows(read),
    postures: await postureRows(read),
    proposals: { per: "proposal", rows: proposals },
    transitions: await transitionRows(read),
    cut_rows: parseCutRows((await client.query<{ value: string }>("SELECT value FROM car_meta WHERE key = $1", [CUT_ROWS_KEY])).rows[0]?.value),
  };
}

/**
 * Whether the whole log verifies and vouches for every row of the tables,
 * seals aside: what the store checks, in the caller's transaction, before it
 * seals rows written before rows had seals.
 */
export async function logVouchesForTables(client: PoolClient, key: AuditKey | undefined): Promise<boolean> {
  const { report, events, cutThrough } = await readVerifiedLog(client, key);
  return report.ok && cutThrough === 0 && replayBreak(events, await storedTables(client)) === undefined;
}

async function verifyIn(
  client: PoolClient,
  key: AuditKey | undefined,
  self: DatabaseIdentity,
  anchors: readonly Anchor[] | undefined,
  options: ChainOptions,
): Promise<ChainReport> {
  const { report, events, head, cutThrough, checkpoints } = await readVerifiedLog(client, key);
  if (!report.ok) return report;
  const { proposal_id } = options;
  if (proposal_id !== undefined) report.proposal_events = events.filter((e) => e.proposal_id === proposal_id);
  const headSeq = Number(head.seq);
  if (anchors !== undefined) {
    const broken = anchorBreak(anchors, self, headSeq, (seq) => (seq <= cutThrough ? "removed" : events[seq - cutThrough - 1]?.hash));
    if (broken !== undefined) return { ok: false, verified: report.verified, broken };
    report.anchors = anchorSummary(anchors, self);
  }
  // Read in this transaction's snapshot, like the log. After a cut: seals and what the cut recorded of the rows.
  const table = tableBreak(events, checkpoints, await storedTables(client), key);
  if (table !== undefined) return { ok: false, verified: report.verified, broken: { seq: headSeq, ...table } };
  if (cutThrough > 0) {
    report.state = { compared: false, reason: `events up to seq ${cutThrough} were removed by a cut of the log, so it no longer replays to the whole state` };
    return report;
  }
  const stored = emptyMap();
  for (const row of (await client.query<{ key: string; value: string }>("SELECT key, value FROM car_state WHERE present")).rows)
    setOwn(stored, row.key, JSON.parse(row.value) as JsonValue);
  const difference = firstStateDifference(replayStateChanges(events), stored);
  if (difference !== undefined) return { ok: false, verified: report.verified, broken: { seq: headSeq, reason: difference.reason, key: difference.key } };
  report.state = { compared: true, keys: Object.keys(stored).length };
  return report;
}
