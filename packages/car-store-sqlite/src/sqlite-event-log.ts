/**
 * The hash-chained event log in SQLite. `append` stays synchronous and cheap:
 * it numbers the event, buffers it and feeds subscribers. The buffer is
 * written (hashed, chained, inserted in batches of multi-row INSERTs) by
 * `flush`, which the store calls inside a proposal's begin and commit
 * transactions — so a proposal's events land in the same transaction as the
 * state changes they describe. An event that belongs to no open proposal
 * (an approval record, a multi-agent run) is flushed at once, unless it is
 * deferred (`defer`) to ride the next write, such as a commit about to happen.
 *
 * Several processes may write one database (a server, `car run`, `car
 * approvals`): a flush re-reads the recorded chain head inside its write
 * transaction and renumbers its buffered events after whatever another
 * process appended, so the chain stays one line.
 */
import { CarError, isCarError } from "@car/ir";
import { type CarEvent, EVENT_KINDS, type EventLog, eventMatcher, type EventQuery, limitCount, type NewEvent, type SubscribeOptions } from "@car/engine";
import { type AuditKey, EventFeed, GENESIS_HASH, IntentBatch, linkEvent, type StoredEventRow } from "@car/engine/durable";
import { COLUMN_COUNT, INSERT_COLUMNS, SELECT_COLUMNS, bindEvent, chainAnchor, eventFromRow } from "./event-row.ts";
import type { EventRow } from "./event-row.ts";
import { immediateRunner } from "./schema.ts";
import type { ImmediateRunner, SqliteDatabase } from "./schema.ts";
import { cachedStatement } from "./statement-cache.ts";

/** Rows per multi-row INSERT: fewer statement executions, well under SQLite's bound-parameter limit. */
const BATCH = 64;

/**
 * What the store writes in the same transaction as a flush of events, before
 * them (the begin records of proposals that began since), and its fate.
 */
export interface FlushCompanion {
  write(): void;
  /** The transaction committed. */
  confirm(): void;
  /** It rolled back: what `write` wrote must be written again. */
  abandon(): void;
  /** Makes the intents' write durable by group commit (wal-group-sync.ts): runs `write` unsynced, settles once a shared sync has it. */
  persisted?: ((write: () => void) => Promise<void>) | undefined;
}

export interface ChainHead {
  seq: number;
  hash: string;
}

export class SqliteEventLog implements EventLog {
  readonly #db: SqliteDatabase;
  readonly #immediate: ImmediateRunner;
  readonly #feed = new EventFeed();
  #buffer: CarEvent[] = [];
  /** Proposals between `proposal_received` and their commit: their events wait for it. */
  readonly #open = new Set<string>();
  /** Written by a transaction that has not committed yet. */
  #unconfirmed: CarEvent[] = [];
  #nextSeq: number;
  /** The write the calls started together wait for (`persist`). */
  readonly #intents = new IntentBatch(
    () => this.#persistWrite(),
    () => this.#open.size > 1,
  );
  readonly #readHead;
  readonly #writeHead;
  readonly #insertOne;
  readonly #insertBatch;
  readonly #macKey: AuditKey | undefined;
  readonly #companion: FlushCompanion | undefined;

  /** `macKey`: the audit key; every event written gets its MAC (event-mac.ts). `companion` writes with every flush. */
  constructor(db: SqliteDatabase, macKey?: AuditKey, companion?: FlushCompanion) {
    this.#db = db;
    this.#macKey = macKey;
    this.#companion = companion;
    this.#immediate = immediateRunner(db);
    this.#readHead = db.prepare("SELECT seq, hash FROM chain_head WHERE id = 1");
    this.#writeHead = db.prepare(
      "INSERT INTO chain_head (id, seq, hash) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash",
    );
    const row = `(${Array.from({ length: COLUMN_COUNT }, () => "?").join(", ")})`;
    const insert = `INSERT INTO events (${INSERT_COLUMNS}) VALUES `;
    this.#insertOne = db.prepare(insert + row);
    this.#insertBatch = db.prepare(insert + Array.from({ length: BATCH }, () => row).join(", "));
    this.#nextSeq = (this.recordedHead()?.seq ?? 0) + 1;
  }

  /** The head recorded beside the log (the last appended event, even after retention removed it); null for an empty log. */
  recordedHead(): ChainHead | null {
    return (this.#readHead.get() as ChainHead | undefined) ?? null;
  }

  /** Events are buffered for this proposal until its commit. */
  openProposal(proposal_id: string): void {
    this.#open.add(proposal_id);
  }

  closeProposal(proposal_id: string): void {
    this.#open.delete(proposal_id);
  }

  append(event: NewEvent): CarEvent {
    const stored = this.#buffered(event);
    const pid = stored.proposal_id;
    if (pid === null || !this.#open.has(pid)) this.flush();
    return stored;
  }

  /** Buffered for the next write — a proposal's commit, `persist`, any flush — not written at once (`EventLog.defer`). */
  defer(event: NewEvent): CarEvent {
    return this.#buffered(event);
  }

  #buffered(event: NewEvent): CarEvent {
    const stored = event as CarEvent;
    stored.seq = this.#nextSeq++;
    this.#buffer.push(stored);
    const pid = stored.proposal_id;
    if (pid !== null && stored.kind === EVENT_KINDS.proposalReceived) this.#open.add(pid);
    this.#feed.publish(stored);
    return stored;
  }

  /**
   * Writes every buffered event, chained after the recorded head. Inside a
   * transaction the write is provisional until `confirm` (the transaction
   * committed) or `abandon` (it rolled back: the events are buffered again);
   * outside one it runs in its own transaction.
   */
  flush(): void {
    if (this.#buffer.length === 0) return;
    if (this.#db.inTransaction) {
      this.#write();
      return;
    }
    try {
      this.#immediate(() => this.#write());
    } catch (error) {
      this.abandon();
      throw error;
    }
    this.confirm();
  }

  /**
   * The engine's durability point before a tool call (`EventLog.persist`):
   * the intents of every call started together (intent-batch.ts) are
   * written by one `flush` — one transaction, one sync to disk — and each
   * call waits for it.
   */
  persist(): Promise<void> {
    return this.#intents.request();
  }

  #persistWrite(): void | Promise<void> {
    const persisted = this.#companion?.persisted;
    return persisted === undefined ? this.flush() : persisted(() => this.flush());
  }

  confirm(): void {
    this.#unconfirmed = [];
    this.#companion?.confirm();
  }

  abandon(): void {
    if (this.#unconfirmed.length > 0) this.#buffer = [...this.#unconfirmed, ...this.#buffer];
    this.#unconfirmed = [];
    this.#companion?.abandon();
  }

  /** Drops buffered events that must never be written (a direct write that did not land, a commit the store refused). */
  retract(events: ReadonlySet<CarEvent>): void {
    this.#buffer = this.#buffer.filter((e) => !events.has(e));
  }

  #write(): void {
    this.#companion?.write();
    const buffer = this.#buffer;
    const recorded = this.recordedHead() ?? { seq: 0, hash: GENESIS_HASH };
    if (buffer[0]!.seq !== recorded.seq + 1 || buffer.at(-1)!.seq !== recorded.seq + buffer.length) {
      // Another process appended since our last write (or a forgotten event left a gap): continue after the head.
      for (let i = 0; i < buffer.length; i++) buffer[i]!.seq = recorded.seq + 1 + i;
      this.#nextSeq = recorded.seq + 1 + buffer.length;
    }
    let prev = recorded.hash;
    const params: unknown[] = new Array(BATCH * COLUMN_COUNT);
    let i = 0;
    try {
      for (; i + BATCH <= buffer.length; i += BATCH) {
        for (let j = 0; j < BATCH; j++) prev = this.#bind(params, j * COLUMN_COUNT, buffer[i + j]!, prev);
        this.#insertBatch.run(params);
      }
      for (; i < buffer.length; i++) {
        prev = this.#bind(params, 0, buffer[i]!, prev);
        this.#insertOne.run(params.slice(0, COLUMN_COUNT));
      }
      this.#writeHead.run(buffer[buffer.length - 1]!.seq, prev);
    } catch (error) {
      if (isCarError(error)) throw error;
      throw new CarError("storage_error", `cannot write events: ${(error as Error).message}`, {}, { cause: error });
    }
    this.#unconfirmed = this.#unconfirmed.length === 0 ? buffer : this.#unconfirmed.concat(buffer);
    this.#buffer = [];
  }

  #bind(params: unknown[], at: number, event: CarEvent, prev: string): string {
    bindEvent(params, at, event, linkEvent(event, prev), this.#macKey);
    return event.hash!;
  }

  query(query: EventQuery = {}): CarEvent[] {
    const pushLimit = query.data_matches === undefined || Object.keys(query.data_matches).length === 0;
    const { where, params } = sqlFilter(query);
    const desc = query.order === "desc";
    const limit = query.limit !== undefined && query.limit > 0 ? query.limit : 0;
    const sql = `SELECT ${SELECT_COLUMNS} FROM events${where} ORDER BY seq ${desc ? "DESC" : "ASC"}${pushLimit && limit > 0 ? ` LIMIT ${limit}` : ""}`;
    const matches = eventMatcher(query);
    const stored: CarEvent[] = [];
    const anchor = chainAnchor(this.#db);
    for (const row of cachedStatement(this.#db, sql).iterate(...params) as IterableIterator<EventRow>) {
      const { event } = eventFromRow(row, anchor);
      if (pushLimit || matches(event)) stored.push(event);
    }
    const buffered = this.#buffer.filter(matches);
    let out = desc ? [...buffered.reverse(), ...stored] : [...stored, ...buffered];
    if (limit > 0) out = out.slice(0, limit);
    return out;
  }

  count(query: EventQuery = {}): number {
    if (query.data_matches !== undefined && Object.keys(query.data_matches).length > 0) return this.query(query).length;
    const { where, params } = sqlFilter(query);
    const stored = (cachedStatement(this.#db, `SELECT count(*) AS n FROM events${where}`).get(...params) as { n: number }).n;
    const matches = eventMatcher(query);
    let n = stored;
    for (const e of this.#buffer) if (matches(e)) n++;
    return limitCount(n, query);
  }

  subscribe(options?: SubscribeOptions): AsyncIterableIterator<CarEvent> {
    return this.#feed.subscribe(options);
  }

  /** Every stored event, oldest first; `withText` (verification): with the hashed text rebuilt from its columns. */
  *storedRows(withText = true): IterableIterator<StoredEventRow> {
    const anchor = chainAnchor(this.#db);
    for (const row of this.#db.prepare(`SELECT ${SELECT_COLUMNS} FROM events ORDER BY seq`).iterate() as IterableIterator<EventRow>) {
      yield eventFromRow(row, anchor, withText);
    }
  }

  close(): void {
    this.#feed.close();
  }
}

/** The indexed part of a query as SQL; `data_matches` is left to `eventMatcher`. */
function sqlFilter(query: EventQuery): { where: string; params: (string | number)[] } {
  const clauses: string[] = [];
  const params: (string | number)[] = [];
  if (query.kinds !== undefined && query.kinds.length > 0) {
    clauses.push(`kind IN (${query.kinds.map(() => "?").join(", ")})`);
    params.push(...query.kinds);
  }
  if (query.proposal_id !== undefined) clauses.push("proposal_id = ?"), params.push(query.proposal_id);
  if (query.action_id !== undefined) clauses.push("action_id = ?"), params.push(query.action_id);
  if (query.after_seq !== undefined) clauses.push("seq > ?"), params.push(query.after_seq);
  if (query.since !== undefined) clauses.push("ts >= ?"), params.push(Date.parse(query.since));
  if (query.until !== undefined) clauses.push("ts < ?"), params.push(Date.parse(query.until));
  return { where: clauses.length > 0 ? ` WHERE ${clauses.join(" AND ")}` : "", params };
}
