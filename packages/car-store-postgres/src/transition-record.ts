/**
 * The transition record (`car_transitions`): one row per state change, as
 * the SQLite store keeps its `transitions` table, written in the same
 * transaction as the change and its `state_changed` event, so the audit can
 * compare the table with the log (table-replay.ts) and a row edited, forged
 * or deleted in the database is reported.
 *
 * A delete of an absent key is no change: it bumps no version and leaves no
 * row, on every store (`StateStore.delete` returns null for it).
 */
import type { JsonValue, StateMutation } from "@car/ir";
import type { PendingMutation } from "@car/engine";
import { expectedTransitions, type TransitionRow } from "@car/engine/durable";
import type { PoolClient } from "pg";
import type { ReadQuery } from "./audited-transaction.ts";
import type { LockedKey } from "./commit-conflicts.ts";
import { eventFromRow, type EventRow, sqlLiteral } from "./event-sql.ts";

/** One change a commit makes: the key's version before and after. */
export interface PlannedWrite {
  key: string;
  mutation: StateMutation;
  action_id: string;
  previous_version: number;
  version: number;
}

/**
 * What a proposal's mutations do to the keys as the commit locked them, in
 * order: null for a delete of a key absent at that point (a no-op).
 */
export function planWrites(mutations: readonly PendingMutation[], locked: (key: string) => LockedKey): (PlannedWrite | null)[] {
  const now = new Map<string, { present: boolean; version: number }>();
  return mutations.map((m) => {
    let key = now.get(m.key);
    if (key === undefined) {
      const found = locked(m.key);
      now.set(m.key, (key = { present: found.value !== undefined, version: found.version }));
    }
    if (m.mutation.op === "delete" && !key.present) return null;
    key.present = m.mutation.op === "set";
    key.version++;
    return { key: m.key, mutation: m.mutation, action_id: m.action_id, previous_version: key.version - 1, version: key.version };
  });
}

/** A stored transition with the time it was made. */
export type TimedTransition = TransitionRow & { timestamp: string };

/** The changes a commit of `proposal_id` (null: direct writes) made, as rows of the record. */
export function committedTransitions(writes: readonly PlannedWrite[], proposal_id: string | null, timestamp: string): TimedTransition[] {
  return writes.map((w) => ({
    key: w.key,
    mutation: w.mutation as unknown as JsonValue,
    previous_version: w.previous_version,
    version: w.version,
    proposal_id,
    action_id: proposal_id === null ? null : w.action_id,
    timestamp,
  }));
}

/** The INSERT of `rows` into the record (a statement usable in a CTE), or "" for none; ids follow the rows' order. */
export function transitionInsert(rows: readonly TimedTransition[]): string {
  if (rows.length === 0) return "";
  const nullable = (s: string | null): string => (s === null ? "NULL" : sqlLiteral(s));
  const values = rows
    .map(
      (r) =>
        `(${sqlLiteral(r.key)}, ${sqlLiteral(JSON.stringify(r.mutation))}, ${r.previous_version}, ${r.version}, ${nullable(r.proposal_id)}, ${nullable(r.action_id)}, ${sqlLiteral(r.timestamp)})`,
    )
    .join(", ");
  return `INSERT INTO car_transitions (key, mutation, previous_version, version, proposal_id, action_id, timestamp) VALUES ${values}`;
}

/** Every stored transition in insertion order, `mutation` parsed (kept as text when it is not JSON, so a mangled row still compares unequal). */
export async function transitionRows(read: ReadQuery): Promise<TransitionRow[]> {
  const { rows } = await read<
    Omit<TransitionRow, "mutation" | "previous_version" | "version"> & { mutation: string; previous_version: string; version: string }
  >("SELECT key, mutation, previous_version::text, version::text, proposal_id, action_id FROM car_transitions ORDER BY id");
  return rows.map((r) => ({ ...r, mutation: parseOrText(r.mutation), previous_version: Number(r.previous_version), version: Number(r.version) }));
}

function parseOrText(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

/** Migration 8: the table, and the rows the log says a database written before it had made (none after a cut of the log, which the audit no longer replays). */
export const TRANSITIONS_MIGRATION = {
  name: "transition record",
  sql: `
    CREATE TABLE car_transitions (
      id bigserial PRIMARY KEY,
      key text NOT NULL,
      mutation text NOT NULL,
      previous_version bigint NOT NULL,
      version bigint NOT NULL,
      proposal_id text,
      action_id text,
      timestamp text NOT NULL
    );
    CREATE INDEX car_transitions_key ON car_transitions (key, id);
  `,
  async backfill(client: PoolClient): Promise<void> {
    if ((await client.query("SELECT 1 FROM car_checkpoints LIMIT 1")).rows.length > 0) return;
    const events = (await client.query<EventRow>("SELECT body, hash FROM car_events ORDER BY seq")).rows.map(eventFromRow);
    // The log holds each change's event, not the time the row was written: backfilled rows carry the migration's.
    const timestamp = new Date().toISOString();
    const insert = transitionInsert(expectedTransitions(events).map((r) => ({ ...r, timestamp })));
    if (insert !== "") await client.query(insert);
  },
};
