/**
 * An `EventQuery` as SQL over `car_events`, and a stored row back as a
 * `CarEvent`. The row's `body` is the event's canonical text (everything but
 * `hash`), so parsing it gives the event exactly as it was hashed.
 */
import pg from "pg";
import type { CarEvent, EventQuery } from "@car/engine";

export interface EventRow {
  body: string;
  hash: string;
  /** The event's MAC under the audit key; null when written without it. */
  mac?: string | null;
}

/**
 * A string as an SQL literal: `pg.escapeLiteral`'s result, without its
 * character-by-character copy when there is nothing to escape (event texts
 * rarely hold a quote or a backslash, and a large proposal inlines
 * megabytes of them).
 */
export function sqlLiteral(value: string): string {
  return value.includes("'") || value.includes("\\") ? pg.escapeLiteral(value) : `'${value}'`;
}

export function eventFromRow(row: EventRow): CarEvent {
  const event = JSON.parse(row.body) as CarEvent;
  event.hash = row.hash;
  return event;
}

/** The WHERE clause (with a leading space, or empty) and its parameters. */
export function eventWhere(query: EventQuery): { where: string; params: unknown[] } {
  const params: unknown[] = [];
  const clauses: string[] = [];
  const param = (value: unknown): string => {
    params.push(value);
    return `$${params.length}`;
  };
  if (query.kinds !== undefined && query.kinds.length > 0) clauses.push(`kind = ANY(${param([...query.kinds])}::text[])`);
  if (query.proposal_id !== undefined) clauses.push(`proposal_id = ${param(query.proposal_id)}`);
  if (query.action_id !== undefined) clauses.push(`action_id = ${param(query.action_id)}`);
  if (query.since !== undefined) clauses.push(`ts >= ${param(query.since)}::timestamptz`);
  if (query.until !== undefined) clauses.push(`ts < ${param(query.until)}::timestamptz`);
  if (query.after_seq !== undefined) clauses.push(`seq > ${param(query.after_seq)}`);
  if (query.data_matches !== undefined) {
    for (const [key, value] of Object.entries(query.data_matches)) clauses.push(`(body::jsonb -> 'data' -> ${param(key)}) = to_jsonb(${param(value)}::text)`);
  }
  return { where: clauses.length === 0 ? "" : ` WHERE ${clauses.join(" AND ")}`, params };
}
