/**
 * The event log of a PostgreSQL-backed runtime: the shared log (every
 * runtime's events, in commit order) behind the synchronous `EventLog` seam.
 *
 * Writing: `append` never waits on the network. A proposal's events are
 * buffered by the engine and written, hash-chained, by its commit
 * transaction — except that before a tool is called (`persist`) the events
 * appended so far, its `dispatch_intent` among them, are written in a
 * transaction of their own, shared by every call started in the same turn
 * of the event loop; the commit then writes the rest. Events that belong to
 * no open proposal of this runtime (multi-agent runs, direct appends) are
 * written shortly after, as a batch. Until written, an event's `seq` is 0.
 *
 * Reading: `query` / `count` / `subscribe` work on a local copy of the log,
 * loaded on start and brought up to date at every `beginProposal` and after
 * every commit — the same consistency model as the state cache (the
 * database as of the last refresh). Other runtimes' events are kept as the
 * stored text and parsed when first read, so following a busy log costs
 * little until someone looks. `queryShared` / `countShared` ask the
 * database directly. Subscribers get events in `seq` order, without gaps,
 * whichever runtime wrote them.
 */
import {
  type CarEvent,
  EVENT_KINDS,
  type EventLog,
  eventMatcher,
  type EventQuery,
  limitCount,
  type NewEvent,
  selectEvents,
  type SubscribeOptions,
} from "@car/engine";
import { EventFeed, IntentBatch } from "@car/engine/durable";
import type { ReadQuery } from "./audited-transaction.ts";
import { eventFromRow, eventWhere } from "./event-sql.ts";
import type { EventRow } from "./event-sql.ts";

/** Another runtime's event as fetched: parsed on first read. */
export interface StoredEvent {
  seq: number;
  row: EventRow;
}

export class PostgresEventLog implements EventLog {
  /** The log as known here, by `seq`; `#known[i].seq === #base + i + 1` up to `#prefix`. */
  readonly #known: (CarEvent | StoredEvent)[] = [];
  /** The seq of the last event a cut of the log removed (0: none): the known log starts after it. */
  #base = 0;
  /** Set by the first `subscribe`: from then on events are parsed as they arrive, to feed subscribers. */
  #feeding = false;
  /** How many leading events are known without a gap (and were fed to subscribers). */
  #prefix = 0;
  /** Proposals received and not yet committed: their events travel with the commit. */
  readonly #open = new Set<string>();
  #loose: CarEvent[] = [];
  /** Events of open proposals not written yet, in append order: the next `persist` writes them. */
  #unwritten: CarEvent[] = [];
  /** Events a `persist` wrote: their proposal's commit leaves them out. */
  readonly #persisted = new WeakSet<CarEvent>();
  /** The write the calls started together wait for. */
  readonly #intents = new IntentBatch(() => this.#writeUnwritten());
  /** Every `persist` write, in order (so a proposal's events reach the chain in append order). */
  #writes: Promise<void> = Promise.resolve();
  readonly #feed = new EventFeed();
  readonly #read: ReadQuery;
  readonly #onLoose: () => void;
  readonly #write: (events: CarEvent[]) => Promise<void>;

  /** `write` appends events to the log in a transaction of their own (setting their seqs and hashes). */
  constructor(read: ReadQuery, onLoose: () => void, write: (events: CarEvent[]) => Promise<void>) {
    this.#read = read;
    this.#onLoose = onLoose;
    this.#write = write;
  }

  append(event: NewEvent): CarEvent {
    const stored = event as CarEvent;
    stored.seq = 0;
    const id = stored.proposal_id;
    if (id !== null && stored.kind === EVENT_KINDS.proposalReceived) {
      this.#open.add(id);
      this.#unwritten.push(stored);
    } else if (id === null || !this.#open.has(id)) {
      this.#loose.push(stored);
      if (this.#loose.length === 1) this.#onLoose();
    } else this.#unwritten.push(stored);
    return stored;
  }

  /**
   * The engine's durability point before a tool call (`EventLog.persist`):
   * the events of open proposals appended so far are written in one
   * transaction, shared by every call started together (intent-batch.ts);
   * each call waits for it.
   */
  persist(): Promise<void> {
    return this.#intents.request();
  }

  /** Writes the unwritten events of open proposals, after the writes before it. */
  #writeUnwritten(): Promise<void> {
    const events = this.#unwritten;
    this.#unwritten = [];
    const written = this.#writes.then(async () => {
      if (events.length === 0) return;
      await this.#write(events);
      for (const e of events) this.#persisted.add(e);
    });
    this.#writes = written.catch(() => {});
    return written;
  }

  /**
   * What a commit of `proposal_id` still has to write of `events`: those no
   * `persist` wrote. Waits for the writes in flight first, and takes the
   * proposal's unwritten events out of the next one.
   */
  async unpersisted(proposal_id: string, events: readonly CarEvent[]): Promise<CarEvent[]> {
    this.#unwritten = this.#unwritten.filter((e) => e.proposal_id !== proposal_id);
    await this.#writes;
    return events.filter((e) => !this.#persisted.has(e));
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

  /** The highest seq known without a gap: a refresh asks for what follows. */
  get knownThrough(): number {
    return this.#base + this.#prefix;
  }

  /** A cut of the log removed every event through `seq` (a checkpoint says so): they are forgotten here too. */
  forgetThrough(seq: number): void {
    if (seq <= this.#base) return;
    let n = 0;
    while (n < this.#known.length && this.#known[n]!.seq <= seq) n++;
    this.#known.splice(0, n);
    this.#prefix = Math.max(0, this.#prefix - n);
    this.#base = seq;
    this.#advance();
  }

  /** True when events written here sit after a gap (another runtime committed in between). */
  get hasGap(): boolean {
    return this.#known.length > this.#prefix;
  }

  /** Takes written events (this runtime's commits, or a refresh), keeps them in `seq` order, feeds subscribers as the gap-free prefix grows. */
  learn(events: readonly (CarEvent | StoredEvent)[]): void {
    for (const e of events) {
      if (e.seq <= this.#base + this.#prefix) continue;
      let i = this.#known.length;
      while (i > this.#prefix && this.#known[i - 1]!.seq > e.seq) i--;
      if (i > this.#prefix && this.#known[i - 1]!.seq === e.seq) continue;
      this.#known.splice(i, 0, e);
    }
    this.#advance();
  }

  /** Extends the gap-free prefix over the events that continue it, feeding subscribers. */
  #advance(): void {
    while (this.#prefix < this.#known.length && this.#known[this.#prefix]!.seq === this.#base + this.#prefix + 1) {
      if (this.#feeding) this.#feed.publish(this.#event(this.#prefix));
      this.#prefix++;
    }
  }

  /** The known event at index `i`, parsed (once) if it was fetched as text. */
  #event(i: number): CarEvent {
    const known = this.#known[i]!;
    if (!("row" in known)) return known;
    const event = eventFromRow(known.row);
    this.#known[i] = event;
    return event;
  }

  /** The gap-free prefix, parsed. */
  #events(): CarEvent[] {
    const out = new Array<CarEvent>(this.#prefix);
    for (let i = 0; i < this.#prefix; i++) out[i] = this.#event(i);
    return out;
  }

  query(query: EventQuery = {}): CarEvent[] {
    return selectEvents(this.#events(), query);
  }

  count(query: EventQuery = {}): number {
    const matches = eventMatcher(query);
    let n = 0;
    for (let i = 0; i < this.#prefix; i++) if (matches(this.#event(i))) n++;
    return limitCount(n, query);
  }

  subscribe(options: SubscribeOptions = {}): AsyncIterableIterator<CarEvent> {
    this.#feeding = true;
    return this.#feed.subscribe(options);
  }

  /** Every runtime's events matching `query`, from the database. */
  async queryShared(query: EventQuery = {}): Promise<CarEvent[]> {
    const { where, params } = eventWhere(query);
    const order = query.order === "desc" ? "DESC" : "ASC";
    const limit = query.limit !== undefined && query.limit > 0 ? ` LIMIT ${Math.floor(query.limit)}` : "";
    const { rows } = await this.#read<EventRow>(`SELECT body, hash FROM car_events${where} ORDER BY seq ${order}${limit}`, params);
    return rows.map(eventFromRow);
  }

  /** How many of every runtime's events match `query`, from the database. */
  async countShared(query: EventQuery = {}): Promise<number> {
    const { where, params } = eventWhere(query);
    const { rows } = await this.#read<{ n: string }>(`SELECT count(*) AS n FROM car_events${where}`, params);
    const n = Number(rows[0]!.n);
    return limitCount(n, query);
  }

  /** Ends every live feed (the store is closing). */
  close(): void {
    this.#feed.close();
  }
}
