/**
 * The event log of a PostgreSQL-backed runtime. `append` is synchronous (the
 * engine's hot path never waits on the network): a proposal's events are
 * buffered by the engine and written, hash-chained, in its commit
 * transaction; events that belong to no open proposal of this runtime
 * (multi-agent runs, direct appends) are written shortly after in a batch of
 * their own. Until written, an event's `seq` is 0.
 *
 * Two ways to read:
 * - `query` / `count` / `subscribe` (the `EventLog` seam, synchronous): the
 *   events this runtime wrote, as they were written;
 * - `queryShared` / `countShared`: the whole log, every runtime's events,
 *   in `seq` order, straight from the database.
 */
import type { Pool } from "pg";
import { EVENT_KINDS } from "../../events/event.ts";
import type { CarEvent, EventQuery, NewEvent } from "../../events/event.ts";
import { eventMatcher } from "../../events/event-log.ts";
import type { EventLog, SubscribeOptions } from "../../events/event-log.ts";
import { EventFeed } from "../shared/event-feed.ts";
import { eventFromRow, eventWhere } from "./event-sql.ts";
import type { EventRow } from "./event-sql.ts";

export class PostgresEventLog implements EventLog {
  /** Events this runtime wrote, in `seq` order. */
  readonly #written: CarEvent[] = [];
  /** Proposals received and not yet committed: their events travel with the commit. */
  readonly #open = new Set<string>();
  #loose: CarEvent[] = [];
  readonly #feed = new EventFeed();
  readonly #pool: Pool;
  readonly #onLoose: () => void;

  constructor(pool: Pool, onLoose: () => void) {
    this.#pool = pool;
    this.#onLoose = onLoose;
  }

  append(event: NewEvent): CarEvent {
    const stored = event as CarEvent;
    stored.seq = 0;
    const id = stored.proposal_id;
    if (id !== null && stored.kind === EVENT_KINDS.proposalReceived) this.#open.add(id);
    else if (id === null || !this.#open.has(id)) {
      this.#loose.push(stored);
      if (this.#loose.length === 1) this.#onLoose();
    }
    return stored;
  }

  /** The buffered events of no open proposal, handed over for writing. */
  takeLoose(): CarEvent[] {
    const out = this.#loose;
    this.#loose = [];
    return out;
  }

  /** The proposal's outcome is written: later events with its id are loose. */
  closeProposal(proposal_id: string): void {
    this.#open.delete(proposal_id);
  }

  /** Events the store has just committed (numbered and chained): kept for `query` and fed to subscribers. */
  written(events: readonly CarEvent[]): void {
    for (const e of events) {
      let i = this.#written.length;
      while (i > 0 && this.#written[i - 1]!.seq > e.seq) i--;
      this.#written.splice(i, 0, e);
      this.#feed.publish(e);
    }
  }

  query(query: EventQuery = {}): CarEvent[] {
    const matches = eventMatcher(query);
    let out = this.#written.filter(matches);
    if (query.order === "desc") out.reverse();
    if (query.limit !== undefined && query.limit > 0) out = out.slice(0, query.limit);
    return out;
  }

  count(query: EventQuery = {}): number {
    const n = this.#written.filter(eventMatcher(query)).length;
    return query.limit !== undefined && query.limit > 0 ? Math.min(n, query.limit) : n;
  }

  subscribe(options: SubscribeOptions = {}): AsyncIterableIterator<CarEvent> {
    return this.#feed.subscribe(options);
  }

  /** Every runtime's events matching `query`, from the database. */
  async queryShared(query: EventQuery = {}): Promise<CarEvent[]> {
    const { where, params } = eventWhere(query);
    const order = query.order === "desc" ? "DESC" : "ASC";
    const limit = query.limit !== undefined && query.limit > 0 ? ` LIMIT ${Math.floor(query.limit)}` : "";
    const { rows } = await this.#pool.query<EventRow>(`SELECT body, hash FROM car_events${where} ORDER BY seq ${order}${limit}`, params);
    return rows.map(eventFromRow);
  }

  /** How many of every runtime's events match `query`. */
  async countShared(query: EventQuery = {}): Promise<number> {
    const { where, params } = eventWhere(query);
    const { rows } = await this.#pool.query<{ n: string }>(`SELECT count(*) AS n FROM car_events${where}`, params);
    const n = Number(rows[0]!.n);
    return query.limit !== undefined && query.limit > 0 ? Math.min(n, query.limit) : n;
  }

  /** Ends every live feed (the store is closing). */
  close(): void {
    this.#feed.close();
  }
}
