/**
 * A `RuntimeStore` on PostgreSQL, shared by any number of runtimes in any
 * number of processes or hosts: versioned state, one commit-ordered,
 * hash-chained audit log (log-chain.ts), the approval ledger and postures.
 *
 * - On start: apply missing schema migrations; hold a session advisory lock
 *   that says "this runtime is alive" for as long as its connection lives.
 * - `beginProposal`: record the proposal as executing, refresh the state
 *   cache (see state-cache.ts for the consistency model).
 * - `commitProposal`: one transaction locks every key the proposal read,
 *   assumed or writes, checks their versions (commit-conflicts.ts) under
 *   the configured mode, writes the new values and versions, the
 *   proposal's outcome and its events at the log head — all or nothing.
 *   A runtime that dies mid-proposal has written nothing of it.
 * - Before each tool call: the proposal's events so far, its
 *   `dispatch_intent` among them, are written in a transaction of their own
 *   (one per scheduling level, shared by the calls started together), so
 *   a crash after the call started leaves the intent on record.
 * - `recover`: proposals left executing by runtimes whose liveness lock is
 *   free (their process died) are marked interrupted, with an event listing
 *   the actions whose dispatch intent is on record (their external effects
 *   may have happened).
 */
import { CarError, isCarError, rfc3339, systemClock } from "@car/ir";
import type { Clock, JsonObject, JsonValue } from "@car/ir";
import { judgeTransaction } from "@car/verify";
import type { TransactionMode } from "@car/verify";
import pg from "pg";
import type { PoolClient } from "pg";
import {
  type CarEvent,
  EVENT_KINDS,
  type InterruptedProposal,
  type ProposalBegin,
  type ProposalCommit,
  type RetentionPolicy,
  type RetentionResult,
  type RuntimeStore,
  type StateTransition,
} from "@car/engine";
import {
  type Anchor,
  type AuditKey,
  type ChainOptions,
  type ChainReport,
  commitRefusal,
  directWriteEvent,
  loadOrCreateKeyFile,
  outboundDigest,
  readKeyFile,
  type SignedCheckpoint,
  validateRetention,
} from "@car/engine/durable";
import { cutLog, storedCheckpoints } from "./log-cuts.ts";
import { PostgresApprovalLedger, sealUnsealedApprovals } from "./approval-ledger.ts";
import type { Audit, ReadQuery } from "./audited-transaction.ts";
import { appendStatement, appendToLog, linkAppended, logVouchesForTables, macStatement, storedTables, verifyLog } from "./log-chain.ts";
import type { Appended } from "./log-chain.ts";
import { conflictError, findConflicts } from "./commit-conflicts.ts";
import type { LockedKey } from "./commit-conflicts.ts";
import { PostgresEventLog } from "./event-log.ts";
import { sqlLiteral } from "./event-sql.ts";
import { committedTransitions, type PlannedWrite, planWrites, type TimedTransition, transitionInsert } from "./transition-record.ts";
import type { StoredEvent } from "./event-log.ts";
import { RUNTIME_LOCK_CLASS, migrate } from "./migrations.ts";
import { PostgresOversight } from "./postgres-oversight.ts";
import { PostgresPostureStore, sealUnsealedPostures } from "./posture-store.ts";
import { PostgresRunStore } from "./run-store.ts";
import { StateCache } from "./state-cache.ts";
import type { DirectWrite } from "./state-cache.ts";

export interface PostgresStoreOptions {
  clock?: Clock;
  /**
   * How conflicts found at commit are treated (@car/verify's modes):
   * `strict` (default) refuses the commit with `stale_read` / `write_conflict`;
   * `warn` commits and records a `transaction_warning` event among the
   * proposal's events; `off` checks nothing (writes still get correct versions).
   */
  mode?: TransactionMode;
  /** Connections in this runtime's pool (default 10), plus one for the liveness lock. */
  poolSize?: number;
  /**
   * The audit key's file (created with mode 0600 on first use, e.g.
   * `<CAR_HOME>/audit.key`): every event gets its MAC under it, computed
   * here, so the key never reaches the database. `readonly` only reads it.
   */
  auditKeyFile?: string;
  /** Only read the key file, never create it (verification). */
  readonlyKey?: boolean;
}

/** Recorded among a proposal's events when `warn` mode committed it despite conflicts. */
export const TRANSACTION_WARNING = EVENT_KINDS.transactionWarning;

/** Why a proposal is marked interrupted by `recover`. */
const INTERRUPTED_REASON = "the runtime running it stopped before it committed; none of its effects were applied";

interface StateRow {
  key: string;
  value: string | null;
  present: boolean;
  version: string;
}

export class PostgresStore implements RuntimeStore {
  readonly state: StateCache;
  readonly events: PostgresEventLog;
  readonly approvals: PostgresApprovalLedger;
  readonly postures: PostgresPostureStore;
  readonly runs: PostgresRunStore;
  readonly mode: TransactionMode;
  /** Migration versions this store applied on start (empty when the schema was current). */
  migrationsApplied: number[] = [];
  readonly #pool: pg.Pool;
  readonly #clock: Clock;
  readonly #auditKey: AuditKey | undefined;
  #runtimeKey: number;
  readonly #ready: Promise<void>;
  #liveness: pg.PoolClient | undefined;
  /** The snapshot horizon of the last cache refresh: rows written by transactions at or after it may be new. */
  #horizon = 0n;
  #directWrites: DirectWrite[] = [];
  /** Background writes (direct state writes, loose events), in order; failures surface on the next flush. */
  #background: Promise<void> = Promise.resolve();
  #backgroundError: unknown;
  /** A refresh started after a commit that landed behind other runtimes' events. */
  #catchUp: Promise<void> = Promise.resolve();
  #closed = false;
  /** HMAC under the audit key for digests that leave the process (span attributes); undefined without a key. */
  readonly keyedDigest: ((text: string) => string) | undefined;
  /** Where this database lives, as anchors record it: `postgres://host:port/name`, without credentials or options. */
  readonly location: string;
  readonly #url: string;

  constructor(url: string, options: PostgresStoreOptions = {}) {
    this.#url = url;
    this.location = databaseLocation(url);
    this.#clock = options.clock ?? systemClock;
    this.mode = options.mode ?? "strict";
    const keyFile = options.auditKeyFile;
    const key = keyFile === undefined ? undefined : options.readonlyKey === true ? readKeyFile(keyFile) : loadOrCreateKeyFile(keyFile);
    this.#auditKey = key;
    this.keyedDigest = key === undefined ? undefined : (text) => outboundDigest(key, text);
    // 31 bits: a runtime's id in `car_proposals` and its liveness lock key.
    this.#runtimeKey = 1 + Math.floor(Math.random() * 0x7ffffffe);
    this.#pool = new pg.Pool({ connectionString: url, max: (options.poolSize ?? 10) + 1 });
    // An idle connection that drops is replaced on next use; without a listener it would crash the process.
    this.#pool.on("error", () => {});
    this.state = new StateCache(this.#clock, (write) => {
      this.#directWrites.push(write);
      if (this.#directWrites.length === 1) this.#inBackground(() => this.#writeDirect());
    });
    // What the log, the ledger and the postures read with: after start-up, errors as storage_error.
    const read: ReadQuery = async (sql, params) => {
      await this.#ready;
      return this.#query(sql, params);
    };
    this.events = new PostgresEventLog(
      read,
      () => this.#inBackground(() => this.#writeLoose()),
      (events) => this.#writePersisted(events),
    );
    const audited = <T>(work: (client: PoolClient, audit: Audit) => Promise<T>): Promise<T> => this.#audited(work);
    this.approvals = new PostgresApprovalLedger(read, audited, this.#auditKey);
    this.postures = new PostgresPostureStore(read, audited, this.#auditKey);
    this.runs = new PostgresRunStore(read, audited);
    this.#ready = this.#start();
    this.#ready.catch(() => {});
  }

  /** Resolves once migrations ran and the cache holds the current state; rejects with `storage_error` if the database cannot be used. */
  async ready(): Promise<void> {
    await this.#ready;
  }

  async #start(): Promise<void> {
    const client = await this.#connect();
    try {
      this.migrationsApplied = await migrate(client);
      await this.#sealLegacyRows(client);
      for (;;) {
        const { rows } = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1, $2) AS ok", [RUNTIME_LOCK_CLASS, this.#runtimeKey]);
        if (rows[0]!.ok) break;
        this.#runtimeKey = 1 + Math.floor(Math.random() * 0x7ffffffe);
      }
    } catch (error) {
      client.release(true);
      throw storageError(error, "cannot prepare the PostgreSQL schema");
    }
    this.#liveness = client;
    client.on("error", () => {});
    await this.#refresh();
  }

  /**
   * Seals the approval and posture rows written before rows had seals (a
   * database from an earlier version), but only when the whole log verifies
   * and vouches for every row: a row inserted by hand without a seal stays
   * unsealed, and so refused. The log head is locked meanwhile, so no
   * runtime appends while the log is read.
   */
  async #sealLegacyRows(client: PoolClient): Promise<void> {
    const { rows } = await client.query<{ unsealed: boolean }>(
      "SELECT EXISTS (SELECT 1 FROM car_approvals WHERE seal IS NULL) OR EXISTS (SELECT 1 FROM car_postures WHERE seal IS NULL) AS unsealed",
    );
    if (!rows[0]!.unsealed) return;
    await client.query("BEGIN");
    try {
      await client.query("SELECT seq FROM car_log_head WHERE id = 1 FOR UPDATE");
      if (await logVouchesForTables(client, this.#auditKey)) {
        await sealUnsealedApprovals(client, this.#auditKey);
        await sealUnsealedPostures(client, this.#auditKey);
      }
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    }
  }

  async #connect(): Promise<PoolClient> {
    try {
      return await this.#pool.connect();
    } catch (error) {
      throw storageError(error, "cannot connect to PostgreSQL");
    }
  }

  /**
   * Brings the caches up to date in one statement: every state row written
   * by a transaction at or after the last refresh's snapshot horizon (any
   * transaction that was not visible then has an id at least that high),
   * and every event after the last one known. `prefix` may record the
   * proposal as executing in the same statement.
   */
  async #refresh(prefix = "", params: unknown[] = []): Promise<boolean> {
    const n = params.length;
    // With a `begun` prefix, a part-3 row says its INSERT or UPDATE took effect.
    const begun = prefix === "" ? "" : "UNION ALL SELECT 3, 0, NULL, NULL, NULL, NULL FROM begun";
    const { rows } = await this.#query<RefreshRow>(
      `${prefix}SELECT 0 AS part, 0::bigint AS o, pg_snapshot_xmin(pg_current_snapshot())::text AS a,
         (SELECT coalesce(max((body::jsonb ->> 'seq')::bigint), 0)::text FROM car_checkpoints) AS b, NULL::boolean AS present, NULL AS version
       UNION ALL SELECT 1, ord, key, value, present, version::text FROM car_state WHERE txid >= $${n + 1}::text::xid8
       UNION ALL SELECT 2, seq, body, hash, NULL, NULL FROM car_events WHERE seq > $${n + 2}
       ${begun}
       ORDER BY part, o`,
      [...params, this.#horizon.toString(), this.events.knownThrough],
    );
    // Events a cut of the log removed (by any runtime) are forgotten here too.
    this.events.forgetThrough(Number(rows[0]!.b));
    const events: StoredEvent[] = [];
    for (const row of rows) {
      if (row.part === 1) this.state.absorb(keyFrom({ key: row.a, value: row.b, present: row.present!, version: row.version! }));
      else if (row.part === 2) events.push({ seq: Number(row.o), row: { body: row.a, hash: row.b! } });
    }
    this.events.learn(events);
    const horizon = BigInt(rows[0]!.a);
    if (horizon > this.#horizon) this.#horizon = horizon;
    return rows[rows.length - 1]!.part === 3;
  }

  async #query<R extends pg.QueryResultRow>(sql: string, params: readonly unknown[] = []): Promise<pg.QueryResult<R>> {
    try {
      return await this.#pool.query<R>(sql, [...params]);
    } catch (error) {
      throw storageError(error, "PostgreSQL query failed");
    }
  }

  /**
   * Records the proposal as executing, in the statement that refreshes the
   * caches. A row still executing under this runtime, or under another whose
   * liveness lock is held, is left alone and the run refused
   * (`duplicate_proposal`, DECISIONS §20); one left by a runtime that is gone
   * is taken over.
   */
  async beginProposal(begin: ProposalBegin): Promise<void> {
    await this.#ready;
    await this.flush();
    const begun = await this.#refresh(
      `WITH begun AS (
         INSERT INTO car_proposals AS p (proposal_id, status, runtime_key, began_at, run_id) VALUES ($1, 'executing', $2, $3, $4)
         ON CONFLICT (proposal_id) DO UPDATE SET status = 'executing', runtime_key = EXCLUDED.runtime_key, began_at = EXCLUDED.began_at, run_id = EXCLUDED.run_id
         WHERE p.status <> 'executing' OR (p.runtime_key <> $2 AND pg_try_advisory_xact_lock(${RUNTIME_LOCK_CLASS}, p.runtime_key))
         RETURNING 1
       ) `,
      [begin.proposal_id, this.#runtimeKey, begin.timestamp, begin.run_id],
    );
    if (!begun) {
      throw new CarError("duplicate_proposal", `a run of proposal '${begin.proposal_id}' is still executing; wait for it to end or use another id`, {
        proposal_id: begin.proposal_id,
      });
    }
  }

  /**
   * At most two round trips: (BEGIN; lock and read the keys) when there is
   * anything to check or write, then (write the state; record the outcome;
   * append the events; COMMIT) — statements sent together with their
   * arguments inlined, since every round trip is time some key stays locked.
   */
  async commitProposal(commit: ProposalCommit): Promise<StateTransition[]> {
    // Taken before any await: the versions the engine numbered this proposal's `state_changed` events from.
    const writeBase = new Map<string, { version: number; action_id: string }>();
    if (commit.outcome === "committed")
      for (const m of commit.mutations) if (!writeBase.has(m.key)) writeBase.set(m.key, { version: this.state.version(m.key), action_id: m.action_id });
    const unpersisted = this.events.unpersisted(commit.proposal_id, commit.events);
    await this.#ready;
    await this.flush();
    const events = await unpersisted;
    const client = await this.#connect();
    /** Set once the keys are locked: each mutation's change, null for a delete of an absent key. */
    let planned: (PlannedWrite | null)[] | undefined;
    let locked: Map<string, LockedKey> | undefined;
    try {
      const checking = this.mode !== "off" && (commit.reads.length > 0 || commit.assumptions.length > 0);
      let writes = "";
      const timestamp = commit.events[0]?.timestamp ?? rfc3339(this.#clock.now());
      if (commit.outcome === "committed" && (writeBase.size > 0 || checking)) {
        const found = await this.#lock(client, commit, writeBase);
        this.#check(commit, writeBase, found, events);
        locked = found;
        planned = planWrites(commit.mutations, (key) => found.get(key) ?? { value: undefined, version: 0 });
        writes = stateUpdate(planned, commit.proposal_id, timestamp);
      }
      renumberStateChanges(events, commit, planned ?? []);
      const finish = `SELECT car_finish_proposal(${[commit.proposal_id, commit.outcome].map(pg.escapeLiteral).join(", ")}, ${this.#runtimeKey}, ${pg.escapeLiteral(timestamp)})`;
      const statements = [writes, finish, events.length > 0 ? appendStatement(events) : ""].filter((x) => x !== "");
      // The MACs need the hashes the append returns: one more round trip, in the same transaction.
      const macs = this.#auditKey !== undefined && events.length > 0;
      if (macs && planned === undefined) statements.unshift("BEGIN");
      // Inside the BEGIN of the lock step, or else one implicit transaction for the whole string.
      const results = toArray(await client.query(`${statements.join(";\n")}${planned === undefined || macs ? "" : ";\nCOMMIT"}`));
      if (events.length > 0) linkAppended(events, results[statements.length - 1]!.rows[0] as Appended);
      if (macs) await client.query(`${macStatement(events, this.#auditKey!)};\nCOMMIT`);
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      client.release();
      const refused = isCarError(error, "stale_read") || isCarError(error, "write_conflict");
      const lost = lostRace(error, writeBase);
      if (!refused && lost === undefined) this.events.closeProposal(commit.proposal_id);
      throw lost ?? storageError(error, `cannot commit proposal '${commit.proposal_id}'`);
    }
    client.release();
    this.events.closeProposal(commit.proposal_id);
    const transitions: StateTransition[] = [];
    for (const [i, w] of (planned ?? []).entries()) {
      if (w !== null) transitions.push(this.state.applyCommitted(w.key, w.mutation, w.version, { proposal_id: commit.proposal_id, action_id: w.action_id }));
      else {
        // A delete that found the key absent: the cache, which still held it, learns what the lock found.
        const key = commit.mutations[i]!.key;
        const found = locked?.get(key);
        if (found !== undefined) this.state.absorb({ key, ...found });
      }
    }
    this.events.learn(events);
    // Other runtimes committed in between: fetch their events now, so feeds and queries are not held back
    // until the next proposal. Nothing waits for it (the next `beginProposal` refreshes anyway).
    if (this.events.hasGap) this.#catchUp = this.#catchUp.then(async () => void (await this.#refresh())).catch(() => {});
    return transitions;
  }

  /**
   * Opens the transaction and locks the keys the commit checks or writes
   * (in key order, so two commits never deadlock on them), giving every key
   * a row first — an absent placeholder for a new key — so that two
   * proposals racing on a key that does not exist yet still serialise. A
   * commit that writes nothing takes no locks: one statement's snapshot is
   * a consistent point to check its reads against.
   */
  async #lock(client: PoolClient, commit: ProposalCommit, writeBase: ReadonlyMap<string, unknown>): Promise<Map<string, LockedKey>> {
    const keySet = new Set<string>(writeBase.keys());
    if (this.mode !== "off") {
      for (const r of commit.reads) keySet.add(r.key);
      for (const a of commit.assumptions) keySet.add(a.key);
    }
    const keys = `ARRAY[${[...keySet].sort().map(sqlLiteral).join(",")}]::text[]`;
    const placeholders =
      writeBase.size > 0
        ? `INSERT INTO car_state (key, present, version) SELECT k, false, 0 FROM unnest(${keys}) AS k ORDER BY k ON CONFLICT (key) DO NOTHING;\n`
        : "";
    const lock = writeBase.size > 0 ? " ORDER BY key FOR UPDATE" : "";
    const results = toArray(
      await client.query(`BEGIN;\n${placeholders}SELECT key, value, present, version::text FROM car_state WHERE key = ANY(${keys})${lock}`),
    );
    const found = new Map<string, LockedKey>();
    for (const row of results.at(-1)!.rows as StateRow[]) {
      const k = keyFrom(row);
      found.set(k.key, k);
    }
    return found;
  }

  /**
   * Applies the mode to the conflicts found against the locked versions:
   * refuses (strict), or adds a `transaction_warning` event before the
   * proposal's completion (warn).
   */
  #check(
    commit: ProposalCommit,
    writeBase: ReadonlyMap<string, { version: number; action_id: string }>,
    found: ReadonlyMap<string, LockedKey>,
    events: CarEvent[],
  ): void {
    const current = (key: string): LockedKey => found.get(key) ?? { value: undefined, version: 0 };
    if (this.mode !== "off") {
      const conflicts = findConflicts(commit, writeBase, current);
      if (conflicts.length > 0) {
        const verdict = judgeTransaction({ consistent: false, conflicts }, this.mode);
        if (!verdict.admit) throw conflictError(verdict.blocking);
        const warning: CarEvent = {
          seq: 0,
          kind: TRANSACTION_WARNING,
          proposal_id: commit.proposal_id,
          timestamp: rfc3339(this.#clock.now()),
          data: {
            mode: this.mode,
            keys: [...new Set(verdict.warnings.map((c) => c.key))].sort(),
            conflicts: verdict.warnings as unknown as JsonValue[],
            run_id: commit.run_id,
          },
        };
        const completed = events.findIndex((e) => e.kind === EVENT_KINDS.proposalCompleted);
        events.splice(completed < 0 ? events.length : completed, 0, warning);
      }
    }
  }

  /** Proposals left executing by runtimes that are gone, now marked interrupted (each with a `proposal_interrupted` event). */
  async recover(): Promise<InterruptedProposal[]> {
    await this.#ready;
    const { rows } = await this.#query<{ runtime_key: number }>(
      "SELECT DISTINCT runtime_key FROM car_proposals WHERE status = 'executing' AND runtime_key <> $1",
      [this.#runtimeKey],
    );
    const out: InterruptedProposal[] = [];
    for (const { runtime_key } of rows) {
      const written = await this.#inTransaction("cannot recover interrupted proposals", async (client) => {
        const alive = !(await client.query<{ ok: boolean }>("SELECT pg_try_advisory_xact_lock($1, $2) AS ok", [RUNTIME_LOCK_CLASS, runtime_key])).rows[0]!.ok;
        if (alive) return [];
        // Each with the actions whose dispatch intent is on record: their effects may have happened. The intents are
        // the run's, found by its run id (DECISIONS §20) whatever the clocks said; a row from before schema version 9
        // names no run, and neither do its intents: those are read as they were, by time (since the run began).
        const marked = await client.query<{ proposal_id: string; run_id: string | null; began_at: string; dispatched: string[] }>(
          `WITH marked AS (
             UPDATE car_proposals SET status = 'interrupted' WHERE runtime_key = $1 AND status = 'executing' RETURNING proposal_id, run_id, began_at
           )
           SELECT m.proposal_id, m.run_id, m.began_at, ARRAY(
             SELECT e.action_id FROM car_events e
             WHERE e.proposal_id = m.proposal_id AND e.kind = $2
               AND CASE WHEN m.run_id IS NULL THEN e.ts >= m.began_at::timestamptz ELSE (e.body::jsonb -> 'data' ->> 'run_id') = m.run_id END
             GROUP BY e.action_id ORDER BY min(e.seq)
           ) AS dispatched
           FROM marked m ORDER BY m.began_at, m.proposal_id`,
          [runtime_key, EVENT_KINDS.dispatchIntent],
        );
        const events: CarEvent[] = [];
        for (const p of marked.rows) {
          const data: JsonObject = { began_at: p.began_at, reason: INTERRUPTED_REASON, dispatched: p.dispatched };
          const interrupted: InterruptedProposal = { proposal_id: p.proposal_id, timestamp: p.began_at };
          if (p.run_id !== null) {
            data["run_id"] = p.run_id;
            interrupted.run_id = p.run_id;
          }
          if (p.dispatched.length > 0) interrupted.dispatched = p.dispatched;
          events.push({ seq: 0, kind: EVENT_KINDS.proposalInterrupted, proposal_id: p.proposal_id, timestamp: rfc3339(this.#clock.now()), data });
          out.push(interrupted);
        }
        await appendToLog(client, events, this.#auditKey);
        return events;
      });
      this.events.learn(written);
    }
    return out;
  }

  /**
   * The whole log's hash chain, every runtime's events, verified from the
   * database (MACs too with the audit key), then the anchors of this
   * database, then the stored state against the replayed log.
   */
  async verifyChain(options: { anchors?: readonly Anchor[] } & ChainOptions = {}): Promise<ChainReport> {
    await this.#ready;
    try {
      return await verifyLog(this.#pool, this.#auditKey, { id: await this.databaseId(), location: this.location }, options.anchors, options);
    } catch (error) {
      throw storageError(error, "cannot read the event log");
    }
  }

  /**
   * Cuts the log now by `policy` — an operator act (`events.retention`,
   * `events.truncate`, `events.clear`; DECISIONS §24) that leaves a signed,
   * chained checkpoint naming it (log-cuts.ts). This store keeps no
   * standing policy of its own: without `policy` nothing is cut. Other
   * runtimes forget the removed events at their next refresh.
   */
  async enforceRetention(now: number = this.#clock.now(), policy?: RetentionPolicy): Promise<RetentionResult> {
    if (policy === undefined) return { removed: 0, checkpoint: null };
    const chosen = validateRetention(policy);
    await this.#ready;
    const result = await this.#inTransaction("cannot cut the event log", (client) => cutLog(client, chosen, this.#auditKey, now, storedTables));
    if (result.checkpoint !== null) this.events.forgetThrough(result.checkpoint.checkpoint.seq);
    return result;
  }

  /** Every cut's signed checkpoint, oldest first. */
  async checkpoints(): Promise<SignedCheckpoint[]> {
    await this.#ready;
    const client = await this.#connect();
    try {
      return await storedCheckpoints(client);
    } catch (error) {
      throw storageError(error, "cannot read the checkpoints");
    } finally {
      client.release();
    }
  }

  /** This database's random id, which anchors name. */
  async databaseId(): Promise<string> {
    await this.#ready;
    return (await this.#query<{ value: string }>("SELECT value FROM car_meta WHERE key = 'database_id'")).rows[0]!.value;
  }

  /** The chain head to keep outside the database (`car audit anchor`); null for an empty log. */
  async anchor(): Promise<Anchor | null> {
    await this.#ready;
    const head = (await this.#query<{ seq: string; hash: string }>("SELECT seq::text, hash FROM car_log_head WHERE id = 1")).rows[0]!;
    if (Number(head.seq) === 0) return null;
    return { database_id: await this.databaseId(), database: this.location, seq: Number(head.seq), hash: head.hash, anchored_at: rfc3339(this.#clock.now()) };
  }

  /** Waits for background writes (direct state writes, events outside proposals); rethrows the first that failed. */
  async flush(): Promise<void> {
    await this.#background;
    if (this.#backgroundError !== undefined) {
      const error = this.#backgroundError;
      this.#backgroundError = undefined;
      throw error;
    }
  }

  #inBackground(work: () => Promise<void>): void {
    this.#background = this.#background.then(async () => {
      try {
        await this.#ready;
        await work();
      } catch (error) {
        this.#backgroundError ??= error;
      }
    });
  }

  /** Direct writes, last writer wins: each bumps the key's stored version and appends its `state_changed` event in the same transaction. */
  async #writeDirect(): Promise<void> {
    const writes = this.#directWrites;
    this.#directWrites = [];
    const events: CarEvent[] = [];
    await this.#inTransaction("cannot write state", async (client) => {
      const recorded: TimedTransition[] = [];
      for (const w of writes) {
        // A delete finds the key absent when another runtime deleted it first: no change, no version, no record.
        const { rows } = await client.query<StateRow>(
          w.mutation.op === "set"
            ? `INSERT INTO car_state (key, value, present, version) VALUES ($1, $2, true, 1)
               ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, present = true, version = car_state.version + 1, txid = pg_current_xact_id()
               RETURNING key, value, present, version::text`
            : `UPDATE car_state SET value = NULL, present = false, version = version + 1, txid = pg_current_xact_id()
               WHERE key = $1 AND present RETURNING key, value, present, version::text`,
          w.mutation.op === "set" ? [w.key, JSON.stringify(w.mutation.value)] : [w.key],
        );
        if (rows.length === 0) continue;
        const stored = keyFrom(rows[0]!);
        this.state.absorb(stored);
        const transition = {
          key: w.key,
          mutation: w.mutation,
          previous_version: stored.version - 1,
          version: stored.version,
          proposal_id: null,
          action_id: null,
        };
        const timestamp = rfc3339(this.#clock.now());
        events.push({ seq: 0, ...directWriteEvent({ ...transition, timestamp }) });
        recorded.push({ ...transition, mutation: w.mutation as unknown as JsonValue, timestamp });
      }
      if (recorded.length > 0) await client.query(transitionInsert(recorded));
      await appendToLog(client, events, this.#auditKey);
    });
    this.events.learn(events);
  }

  /**
   * Events of running proposals written before a tool call (`persist`): one
   * statement, its own transaction — two round trips with the audit key,
   * whose MACs need the hashes the append returns.
   */
  async #writePersisted(events: CarEvent[]): Promise<void> {
    await this.#ready;
    const client = await this.#connect();
    const keyed = this.#auditKey !== undefined;
    try {
      const results = toArray(await client.query(keyed ? `BEGIN;\n${appendStatement(events)}` : appendStatement(events)));
      linkAppended(events, results.at(-1)!.rows[0] as Appended);
      if (keyed) await client.query(`${macStatement(events, this.#auditKey!)};\nCOMMIT`);
    } catch (error) {
      if (keyed) await client.query("ROLLBACK").catch(() => {});
      throw storageError(error, "cannot write the dispatch intents");
    } finally {
      client.release();
    }
    this.events.learn(events);
  }

  /** Events appended outside any open proposal of this runtime, written as one chain. */
  async #writeLoose(): Promise<void> {
    const events = this.events.takeLoose();
    if (events.length === 0) return;
    await this.#inTransaction("cannot append events", (client) => appendToLog(client, events, this.#auditKey));
    this.events.learn(events);
  }

  /** Runs `work` in a transaction whose audit events join the log in the same commit. */
  async #audited<T>(work: (client: PoolClient, audit: Audit) => Promise<T>): Promise<T> {
    await this.#ready;
    const events: CarEvent[] = [];
    const audit: Audit = (kind, data, options = {}) => {
      const event: CarEvent = { seq: 0, kind, proposal_id: null, timestamp: options.timestamp ?? rfc3339(this.#clock.now()), data };
      if (options.action_id !== undefined) event.action_id = options.action_id;
      events.push(event);
    };
    const result = await this.#inTransaction("cannot write to the ledger", async (client) => {
      const done = await work(client, audit);
      await appendToLog(client, events, this.#auditKey);
      return done;
    });
    this.events.learn(events);
    return result;
  }

  /** Runs `work` in one transaction on a pooled connection; a failure rolls it back and surfaces as `storage_error` (a CarError passes as is). */
  async #inTransaction<T>(what: string, work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.#connect();
    try {
      await client.query("BEGIN");
      const result = await work(client);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw storageError(error, what);
    } finally {
      client.release();
    }
  }

  /**
   * Oversight shared with every server on this database (supervision
   * intents, approval wake-ups, host events): @car/engine's
   * `SharedOversight`, listening on a connection of its own once started.
   * Close it before the store.
   */
  sharedOversight(): PostgresOversight {
    return new PostgresOversight(this.#url, this.#pool, this.#auditKey, this.#ready);
  }

  /** Writes what is pending, releases the liveness lock and closes every connection. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.#ready.catch(() => {});
      await this.#catchUp;
      await this.flush();
    } finally {
      this.events.close();
      this.#liveness?.release();
      await this.#pool.end();
    }
  }
}

/** A connection URL's server and database name: what identifies the database, not how one logs in to it. */
function databaseLocation(url: string): string {
  try {
    const u = new URL(url);
    return `postgres://${u.hostname}:${u.port === "" ? "5432" : u.port}${u.pathname}`;
  } catch {
    // A keyword/value connection string: itself, without a password.
    return url
      .replace(/password\s*=\s*('[^']*'|\S+)/gi, "")
      .replace(/\s+/g, " ")
      .trim();
  }
}

interface RefreshRow {
  part: number;
  o: string;
  a: string;
  b: string | null;
  present: boolean | null;
  version: string | null;
}

/** node-postgres answers a multi-statement query with one result per statement. */
function toArray(result: pg.QueryResult | pg.QueryResult[]): pg.QueryResult[] {
  return Array.isArray(result) ? result : [result];
}

/** The UPDATE giving each written key its final value and version (one more per write, from `before`); empty for no writes. */
/**
 * One statement: the changed keys' final rows, and the commit's transitions
 * inserted in order (a CTE), under the row locks — so each key's record is
 * in the order its commits took the lock.
 */
function stateUpdate(planned: readonly (PlannedWrite | null)[], proposal_id: string, timestamp: string): string {
  const writes = planned.filter((w) => w !== null);
  const rows = new Map<string, { value: string | null; version: number }>();
  for (const w of writes) rows.set(w.key, { value: w.mutation.op === "set" ? JSON.stringify(w.mutation.value) : null, version: w.version });
  if (rows.size === 0) return "";
  const values = [...rows].map(([key, r]) => `(${sqlLiteral(key)}, ${r.value === null ? "NULL" : sqlLiteral(r.value)}::text, ${r.version}::bigint)`).join(", ");
  return `WITH recorded AS (${transitionInsert(committedTransitions(writes, proposal_id, timestamp))})
    UPDATE car_state AS s SET value = u.value, present = u.value IS NOT NULL, version = u.version, txid = pg_current_xact_id()
    FROM (VALUES ${values}) AS u(key, value, version) WHERE s.key = u.key`;
}

function keyFrom(row: StateRow): { key: string; value: JsonValue | undefined; version: number } {
  return { key: row.key, value: row.present && row.value !== null ? (JSON.parse(row.value) as JsonValue) : undefined, version: Number(row.version) };
}

/**
 * Sets each `state_changed` event's `version` to the one the write really
 * gets (it differs from the cache's guess only when a conflict was let
 * through). A delete that found the key absent changes nothing and keeps
 * the version it was given; the audit skips it, like the store did.
 */
function renumberStateChanges(events: readonly CarEvent[], commit: ProposalCommit, planned: readonly (PlannedWrite | null)[]): void {
  // Each key's events follow its mutations, in order.
  const byKey = new Map<string, (PlannedWrite | null)[]>();
  planned.forEach((w, i) => {
    const key = commit.mutations[i]!.key;
    byKey.set(key, [...(byKey.get(key) ?? []), w]);
  });
  for (const e of events) {
    if (e.kind !== EVENT_KINDS.stateChanged) continue;
    const write = byKey.get(String(e.data["key"]))?.shift();
    if (write != null && e.data["version"] !== write.version) e.data["version"] = write.version;
  }
}

/**
 * PostgreSQL broke a lock cycle between two commits (deadlock) or refused a
 * serialisation: the proposal lost a race on its written keys.
 */
function lostRace(error: unknown, writeBase: ReadonlyMap<string, unknown>): CarError | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== "40P01" && code !== "40001") return undefined;
  return commitRefusal("write_conflict", writeBase.keys());
}

function storageError(error: unknown, what: string): CarError {
  if (isCarError(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new CarError("storage_error", `${what}: ${message}`, {}, { cause: error });
}
