/**
 * The audit log's hash chain on PostgreSQL: one chain across every runtime,
 * in commit order. A transaction appending events locks the log head
 * (`car_log_head`), numbers its events after it, links them with the shared
 * chain helpers and moves the head — as its last statements, so the lock is
 * held only from there to COMMIT while everything before it (key locks,
 * checks, state writes) runs in parallel across runtimes. Because `seq`s
 * are handed out under that lock, the visible log is always a gap-free
 * prefix: a reader resuming after `seq` N never misses an event, and each
 * proposal's events form one contiguous, linked run.
 *
 * Verification is the shared `ChainVerifier` over the whole log, against
 * the recorded head (a removed tail is found too).
 */
import type { Pool, PoolClient } from "pg";
import type { CarEvent } from "../../events/event.ts";
import { ChainVerifier } from "../shared/chain-verify.ts";
import type { ChainReport } from "../shared/chain-verify.ts";
import { linkEvent } from "../shared/event-hash.ts";
import { eventFromRow } from "./event-sql.ts";
import type { EventRow } from "./event-sql.ts";

/**
 * Numbers, links and inserts `events` at the end of the log inside the
 * caller's transaction (setting `seq`, `prev_hash` and `hash` on each in
 * place). The head stays locked until the caller commits or rolls back.
 */
export async function appendToLog(client: PoolClient, events: readonly CarEvent[]): Promise<void> {
  if (events.length === 0) return;
  const head = (await client.query<{ seq: string; hash: string }>("SELECT seq::text, hash FROM car_log_head WHERE id = 1 FOR UPDATE")).rows[0]!;
  const n = events.length;
  const seqs = new Array<number>(n);
  const proposals = new Array<string | null>(n);
  const actions = new Array<string | null>(n);
  const kinds = new Array<string>(n);
  const stamps = new Array<string>(n);
  const bodies = new Array<string>(n);
  const hashes = new Array<string>(n);
  let seq = Number(head.seq);
  let prev = head.hash;
  events.forEach((event, i) => {
    event.seq = seqs[i] = ++seq;
    bodies[i] = linkEvent(event, prev);
    prev = hashes[i] = event.hash!;
    proposals[i] = event.proposal_id;
    actions[i] = event.action_id ?? null;
    kinds[i] = event.kind;
    stamps[i] = event.timestamp;
  });
  await client.query(
    `WITH ev AS (
       INSERT INTO car_events (seq, proposal_id, action_id, kind, ts, body, hash)
       SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::text[])
     )
     UPDATE car_log_head SET seq = $8, hash = $9 WHERE id = 1`,
    [seqs, proposals, actions, kinds, stamps, bodies, hashes, seq, prev],
  );
}

const PAGE = 2000;

/** Verifies the whole log; stops at the first broken link. */
export async function verifyLog(pool: Pool): Promise<ChainReport> {
  const head = (await pool.query<{ seq: string; hash: string }>("SELECT seq::text, hash FROM car_log_head WHERE id = 1")).rows[0]!;
  const verifier = new ChainVerifier([], undefined);
  let after = 0;
  for (;;) {
    const { rows } = await pool.query<EventRow>(`SELECT body, hash FROM car_events WHERE seq > $1 ORDER BY seq LIMIT ${PAGE}`, [after]);
    for (const row of rows) {
      let event: CarEvent;
      try {
        event = eventFromRow(row);
      } catch {
        verifier.check({ event: { seq: after + 1, kind: "", proposal_id: null, timestamp: "", data: {} }, problem: "the stored event is not JSON" });
        return verifier.finish();
      }
      after = event.seq;
      if (!verifier.check({ event, stored: row.body })) return verifier.finish();
    }
    if (rows.length < PAGE) break;
  }
  return verifier.finish(Number(head.seq) === 0 ? null : { seq: Number(head.seq), hash: head.hash });
}

/** Every event after `seq`, in order (the cross-runtime tail a runtime's event cache follows). */
export async function eventsAfter(pool: Pool, seq: number): Promise<CarEvent[]> {
  const { rows } = await pool.query<EventRow>("SELECT body, hash FROM car_events WHERE seq > $1 ORDER BY seq", [seq]);
  return rows.map(eventFromRow);
}
