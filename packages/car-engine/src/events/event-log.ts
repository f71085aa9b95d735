/**
 * The event-log seam: append, query, count and a live feed. `append` is
 * synchronous so the engine's hot path never waits on I/O; a durable backend
 * buffers what a proposal appends and writes it in the same transaction as
 * the proposal's state changes (`RuntimeStore.commitProposal` receives those
 * events).
 */
import { getOwn } from "@car/ir";
import type { CarEvent, EventQuery, NewEvent } from "./event.ts";

export interface SubscribeOptions {
  /** Only events matching this query (its `order`/`limit` are ignored). */
  filter?: EventQuery;
  /** Ends the feed when aborted. */
  signal?: AbortSignal;
}

export interface EventLog {
  append(event: NewEvent): CarEvent;
  query(query?: EventQuery): CarEvent[];
  count(query?: EventQuery): number;
  /** Every event appended from now on that matches, until `return()` or the signal aborts. */
  subscribe(options?: SubscribeOptions): AsyncIterableIterator<CarEvent>;
  /**
   * Drops appended events that are not stored yet and must never be (the
   * changes of a commit the store refused). Only a log that buffers a
   * proposal's events outside the commit needs it.
   */
  retract?(events: ReadonlySet<CarEvent>): void;
  /**
   * Makes every event appended so far durable (a log that buffers a
   * proposal's events until its commit). The engine calls it after a
   * `dispatch_intent` and calls the tool only once it returned or its
   * promise resolved, so the intent survives a crash of the call. A log may
   * answer with a promise and write the intents of every call started
   * together — a scheduling level — in one write (one transaction, one sync to
   * disk); a rejection means nothing is known to be durable, and the tool is
   * not called.
   */
  persist?(): void | Promise<void>;
  /**
   * Appends an event that belongs to no open proposal without a write of its
   * own: it is written by the log's next write — a proposal's commit, a
   * `persist`, any flush. For a host that records something in the same
   * transaction (and the same sync) as a commit it is about to make, instead
   * of a transaction and a sync to disk of its own. A log that writes every
   * append at once has no need of it.
   */
  defer?(event: NewEvent): CarEvent;
}

/** A predicate for one query's filters (not its order or limit); shared by every backend that filters in memory. */
export function eventMatcher(query: EventQuery): (event: CarEvent) => boolean {
  const kinds = query.kinds !== undefined && query.kinds.length > 0 ? new Set<string>(query.kinds) : undefined;
  const since = query.since === undefined ? undefined : Date.parse(query.since);
  const until = query.until === undefined ? undefined : Date.parse(query.until);
  const matches = query.data_matches === undefined ? [] : Object.entries(query.data_matches);
  return (event) => {
    if (kinds !== undefined && !kinds.has(event.kind)) return false;
    if (query.proposal_id !== undefined && event.proposal_id !== query.proposal_id) return false;
    if (query.action_id !== undefined && event.action_id !== query.action_id) return false;
    if (query.after_seq !== undefined && event.seq <= query.after_seq) return false;
    if (since !== undefined || until !== undefined) {
      const t = Date.parse(event.timestamp);
      if (since !== undefined && t < since) return false;
      if (until !== undefined && t >= until) return false;
    }
    for (const [key, value] of matches) if (getOwn(event.data, key) !== value) return false;
    return true;
  };
}

/** A query's answer over events held in memory in append order: filtered, then ordered and limited. */
export function selectEvents(events: readonly CarEvent[], query: EventQuery): CarEvent[] {
  const out = events.filter(eventMatcher(query));
  if (query.order === "desc") out.reverse();
  return query.limit !== undefined && query.limit > 0 ? out.slice(0, query.limit) : out;
}

/** A count of matching events, capped by the query's `limit` as `count` reports it. */
export function limitCount(n: number, query: EventQuery): number {
  return query.limit !== undefined && query.limit > 0 ? Math.min(n, query.limit) : n;
}
