/**
 * The SQLite `RuntimeStore`: state, the hash-chained event log, the approval
 * ledger and per-agent postures in one WAL-mode database file.
 *
 * Durability follows the engine's proposal boundaries. The proposal's
 * begin record (its row, status executing, and its `proposal_received`
 * event) is written in one transaction with its first dispatch intents,
 * before any tool runs — or with its commit when it calls no tool. Before
 * each tool call (`events.persist`) the intents of every call started
 * together (a scheduling level) are written in one transaction, so a chain
 * pays one per action and a wide level one for all of it. With
 * `synchronous = full` (the default) each of these transactions is on disk
 * before any tool waiting for it is called, and a commit before the engine
 * reports its proposal: begin and intent records are exactly as durable as
 * commits. On a file they are synced by group commit (wal-group-sync.ts):
 * written without a sync of their own, then one shared `fdatasync` of the
 * WAL for every write that asked meanwhile, off the event loop, so
 * concurrent proposals share syncs. `normal` survives a process crash but
 * may lose the last transactions of each kind on power loss; it is the
 * caller's choice, never the store's. `commitProposal` writes the proposal's state changes, its
 * buffered events and its final status in ONE transaction — nothing of a
 * proposal's writes reaches the database earlier, because the engine keeps
 * them in a `WorkingState` overlay until then. So a process killed
 * mid-proposal leaves the state exactly as before the proposal, and
 * `recover` (run by the next process) marks it interrupted.
 *
 * Other processes may use the same file (a server and `car approvals`, or
 * two `car run`s): each commit runs in an IMMEDIATE transaction, re-reads
 * the state when another connection committed since (`PRAGMA
 * data_version`), and refuses with `stale_read` / `write_conflict` when a
 * key the proposal read or wrote moved meanwhile — the engine then rolls the
 * proposal back, as for any refused commit.
 */
import { randomBytes } from "node:crypto";
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { CarError, isCarError, rfc3339, systemClock } from "@car/ir";
import type { Clock, JsonObject, JsonValue } from "@car/ir";
import {
  applyMutations,
  type CarEvent,
  type DurableRuntimeStore,
  EVENT_KINDS,
  type InterruptedProposal,
  type NewEvent,
  type ProposalBegin,
  type ProposalCommit,
  type RetentionPolicy,
  type RetentionResult,
  type StateTransition,
} from "@car/engine";
import {
  type Anchor,
  anchorBreak,
  anchorSummary,
  type ChainOptions,
  type ChainReport,
  ChainVerifier,
  checkpointKey,
  type CheckpointKey,
  commitRefusal,
  directWriteEvent,
  firstStateDifference,
  loadOrCreateKeyFile,
  outboundDigest,
  parseHexKey,
  readKeyFile,
  replayStateChanges,
  type SignedCheckpoint,
  replayBreak,
  CUT_ROWS_KEY,
  parseCutRows,
  type StoredTables,
  tableBreak,
} from "@car/engine/durable";
import { immediateRunner, openDatabase, relaxedRunner } from "./schema.ts";
import type { ImmediateRunner, OpenOptions, SqliteDatabase } from "./schema.ts";
import { SqliteApprovalLedger } from "./sqlite-approval-ledger.ts";
import { SqliteEventLog } from "./sqlite-event-log.ts";
import { SqlitePostureStore } from "./sqlite-posture-store.ts";
import { SqliteRunStore } from "./sqlite-run-store.ts";
import { removeThrough, retentionCut, storedCheckpoints, validateRetention } from "./sqlite-retention.ts";
import { SqliteStateStore, type TransitionRow } from "./sqlite-state-store.ts";
import type { StoreWriter } from "./store-writer.ts";
import { WalGroupSync } from "./wal-group-sync.ts";

export interface SqliteStoreOptions extends OpenOptions {
  clock?: Clock;
  /** Bound the log; enforced after every commit (and by `enforceRetention`). */
  retention?: RetentionPolicy;
  /**
   * The audit key's file (created with mode 0600 on first use, e.g.
   * `<CAR_HOME>/audit.key`): every event gets its MAC under it (event-mac.ts)
   * and retention checkpoints are signed with it. Without it events carry no
   * MAC and the checkpoint key is kept in the database itself — see the
   * README's trust model for what each choice detects.
   */
  auditKeyFile?: string;
}

/** What `verifyChain` checks beyond the chain itself. */
export interface VerifyOptions extends ChainOptions {
  /** Anchors kept outside the database (anchor.ts); those of this database must still hold. */
  anchors?: readonly Anchor[];
}

/** Store instances open in this process, so `recover` never takes a live instance's proposal for a dead one. */
const LIVE_INSTANCES = new Set<string>();

interface ExecutingRow {
  run: number;
  proposal_id: string;
  /** NULL on a row written before schema version 7. */
  run_id: string | null;
  began_at: string;
  owner_pid: number;
  owner: string;
}

/** Whether the store instance that wrote an `executing` row is still running. */
function ownerAlive(row: Pick<ExecutingRow, "owner_pid" | "owner">): boolean {
  return row.owner_pid === process.pid ? LIVE_INSTANCES.has(row.owner) : processAlive(row.owner_pid);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

export class SqliteStore implements DurableRuntimeStore, StoreWriter {
  readonly path: string;
  readonly state: SqliteStateStore;
  readonly events: SqliteEventLog;
  readonly approvals: SqliteApprovalLedger;
  readonly postures: SqlitePostureStore;
  readonly runs: SqliteRunStore;
  readonly #db: SqliteDatabase;
  readonly #immediate: ImmediateRunner;
  /** Group commit (wal-group-sync.ts) under `synchronous = full` on a file; undefined where every commit syncs itself or nothing does. */
  readonly #groupSync: WalGroupSync | undefined;
  /** Runs a write transaction without its own sync, for the writes that then wait for `#groupSync`. */
  readonly #relaxed: ImmediateRunner;
  readonly #clock: Clock;
  readonly #instance = `${process.pid}:${randomBytes(6).toString("hex")}`;
  readonly #retention: RetentionPolicy | undefined;
  readonly #keyFile: string | undefined;
  readonly #auditKey: CheckpointKey | undefined;
  /** HMAC under the audit key for digests that leave the process (span attributes); undefined without a key. */
  readonly keyedDigest: ((text: string) => string) | undefined;
  /** This database's random id, which anchors name (undefined for a read-only open of a database that predates it). */
  readonly databaseId: string | undefined;
  /** The `proposals` row of each proposal this instance is running. */
  readonly #runs = new Map<string, number>();
  /** Proposals begun whose `proposals` row waits for the first write of their events (their first dispatch intents, or the commit). */
  readonly #unwrittenBegins = new Map<string, ProposalBegin>();
  /** Begin rows written by the transaction in progress: written again if it rolls back. */
  #writtenBegins: ProposalBegin[] = [];
  #dataVersion = 0;
  #closed = false;
  readonly #insertRun;
  readonly #endRun;
  readonly #executingRuns;
  readonly #dataVersionQuery;

  constructor(path: string, options: SqliteStoreOptions = {}) {
    this.path = path;
    this.#clock = options.clock ?? systemClock;
    this.#retention = options.retention === undefined ? undefined : validateRetention(options.retention);
    this.#keyFile = options.auditKeyFile;
    this.#auditKey = this.#keyFile === undefined ? undefined : options.readonly === true ? readKeyFile(this.#keyFile) : loadOrCreateKeyFile(this.#keyFile);
    const key = this.#auditKey;
    this.keyedDigest = key === undefined ? undefined : (text) => outboundDigest(key, text);
    this.#db = openDatabase(path, options);
    this.#immediate = immediateRunner(this.#db);
    this.#groupSync = groupSyncFor(this.#db, options);
    this.#relaxed = this.#groupSync === undefined ? (fn) => fn() : relaxedRunner(this.#db);
    this.databaseId = this.#databaseId(options.readonly === true);
    // Prepared once: `db.pragma()` prepares a statement on every call, and this runs twice per proposal.
    this.#dataVersionQuery = this.#db.prepare("PRAGMA data_version").pluck();
    // A direct write's event lands with its value or not at all: on failure it is forgotten, not retried.
    const direct = new Set<CarEvent>();
    this.state = new SqliteStateStore(this.#db, this.#clock, {
      transact: (fn) => {
        try {
          return this.atomically(() => {
            this.#syncFromOthers();
            return fn();
          });
        } catch (error) {
          this.events.retract(direct);
          throw error;
        } finally {
          direct.clear();
        }
      },
      recordDirect: (transition) => {
        // `append` stores this very object, and may throw while writing it.
        const event = directWriteEvent(transition) as CarEvent;
        direct.add(event);
        this.events.append(event);
      },
    });
    this.#dataVersion = this.#readDataVersion();
    const groupSync = this.#groupSync;
    const persisted =
      groupSync === undefined
        ? undefined
        : (write: () => void) => {
            this.#refuseAfterFailedSync();
            this.#relaxed(write);
            return groupSync.request();
          };
    this.events = new SqliteEventLog(this.#db, this.#auditKey, {
      persisted,
      write: () => this.#writeBegins(),
      confirm: () => {
        this.#writtenBegins = [];
      },
      abandon: () => {
        for (const begin of this.#writtenBegins) {
          this.#runs.delete(begin.proposal_id);
          this.#unwrittenBegins.set(begin.proposal_id, begin);
        }
        this.#writtenBegins = [];
      },
    });
    this.approvals = new SqliteApprovalLedger(this.#db, this, this.#auditKey);
    this.postures = new SqlitePostureStore(this.#db, this, this.#auditKey);
    this.runs = new SqliteRunStore(this.#db, this);
    this.#insertRun = this.#db.prepare("INSERT INTO proposals (proposal_id, run_id, status, began_at, owner_pid, owner) VALUES (?, ?, 'executing', ?, ?, ?)");
    this.#endRun = this.#db.prepare("UPDATE proposals SET status = ?, ended_at = ? WHERE run = ?");
    this.#executingRuns = this.#db.prepare("SELECT owner_pid, owner FROM proposals WHERE proposal_id = ? AND status = 'executing'");
    LIVE_INSTANCES.add(this.#instance);
    if (options.readonly !== true) this.#sealLegacyRows();
  }

  // --- StoreWriter ----------------------------------------------------------

  atomically<T>(fn: () => T): T {
    if (this.#closed) throw new CarError("storage_error", `the store '${this.path}' is closed`);
    this.#refuseAfterFailedSync();
    if (this.#db.inTransaction) return fn();
    let result: T;
    try {
      result = this.#immediate(fn);
    } catch (error) {
      this.events.abandon();
      this.state.reload();
      if (isCarError(error)) throw error;
      throw new CarError("storage_error", `a write to '${this.path}' failed: ${(error as Error).message}`, {}, { cause: error });
    }
    this.events.confirm();
    return result;
  }

  audit(kind: string, data: JsonObject, options: { timestamp?: string; action_id?: string | undefined } = {}): void {
    const event: NewEvent = { kind, proposal_id: null, timestamp: options.timestamp ?? rfc3339(this.#clock.now()), data };
    if (options.action_id !== undefined) event.action_id = options.action_id;
    this.events.append(event);
  }

  // --- RuntimeStore hooks -----------------------------------------------------

  /**
   * Records the proposal as executing. Its row and `proposal_received` event
   * are written with the first write of its events — the dispatch intents of
   * its first tool calls, written before any tool runs, or else its commit —
   * so a proposal pays one transaction (one sync to disk) less, and is
   * still on record as executing before any tool can act.
   */
  beginProposal(begin: ProposalBegin): void {
    if (this.#closed) throw new CarError("storage_error", `the store '${this.path}' is closed`);
    this.#syncFromOthers();
    this.#refuseExecuting(begin.proposal_id);
    this.events.openProposal(begin.proposal_id);
    this.#unwrittenBegins.set(begin.proposal_id, begin);
  }

  /** `duplicate_proposal` when a run of this id is executing: on this instance, or (its row says) on another live one. */
  #refuseExecuting(proposal_id: string): void {
    let executing = this.#runs.has(proposal_id) || this.#unwrittenBegins.has(proposal_id);
    if (!executing) {
      const rows = this.#executingRuns.all(proposal_id) as Pick<ExecutingRow, "owner_pid" | "owner">[];
      executing = rows.some((row) => row.owner !== this.#instance && ownerAlive(row));
    }
    if (executing) {
      throw new CarError("duplicate_proposal", `a run of proposal '${proposal_id}' is still executing; wait for it to end or use another id`, { proposal_id });
    }
  }

  /** Writes the rows of proposals begun since the last write (inside the caller's transaction). */
  #writeBegins(): void {
    for (const begin of this.#unwrittenBegins.values()) {
      this.#runs.set(
        begin.proposal_id,
        Number(this.#insertRun.run(begin.proposal_id, begin.run_id, begin.timestamp, process.pid, this.#instance).lastInsertRowid),
      );
      this.#writtenBegins.push(begin);
    }
    this.#unwrittenBegins.clear();
  }

  /** A failed group sync stops every write (wal-group-sync.ts). */
  #refuseAfterFailedSync(): void {
    const failure = this.#groupSync?.failure;
    if (failure !== undefined) throw failure;
  }

  /**
   * With group commit the transaction is written without a sync of its own
   * and the transitions are returned once a shared sync has them on disk:
   * the engine reports the proposal only then.
   */
  commitProposal(commit: ProposalCommit): StateTransition[] | Promise<StateTransition[]> {
    // `#relaxed` leaves a commit nested in the caller's transaction as it is (schema.ts relaxedRunner).
    const transitions = this.#relaxed(() => this.#commit(commit));
    return this.#groupSync === undefined ? transitions : this.#groupSync.request().then(() => transitions);
  }

  #commit(commit: ProposalCommit): StateTransition[] {
    const transitions = this.atomically(() => {
      if (commit.outcome === "committed") this.#refuseStale(commit);
      const made = commit.outcome === "committed" ? applyMutations(this.state, commit.proposal_id, commit.mutations) : [];
      this.#writeBegins();
      this.events.flush();
      const run = this.#runs.get(commit.proposal_id);
      if (run !== undefined) this.#endRun.run(commit.outcome, rfc3339(this.#clock.now()), run);
      return made;
    });
    this.#runs.delete(commit.proposal_id);
    this.events.closeProposal(commit.proposal_id);
    if (this.#retention !== undefined) this.#enforce(this.#retention, this.#clock.now(), false);
    return transitions;
  }

  /**
   * Marks proposals that were executing in a process that is gone as
   * interrupted, with a `proposal_interrupted` event each. Their writes were
   * never committed, so the state is already their pre-proposal snapshot.
   */
  recover(): InterruptedProposal[] {
    return this.atomically(() => {
      const rows = this.#db
        .prepare("SELECT run, proposal_id, run_id, began_at, owner_pid, owner FROM proposals WHERE status = 'executing' ORDER BY run")
        .all() as ExecutingRow[];
      const now = rfc3339(this.#clock.now());
      const out: InterruptedProposal[] = [];
      for (const row of rows) {
        if (ownerAlive(row)) continue;
        this.#endRun.run("interrupted", now, row.run);
        const dispatched = this.#dispatchedBy(row);
        const data: JsonObject = { began_at: row.began_at, reason: "the process running it stopped before it completed", dispatched };
        const interrupted: InterruptedProposal = { proposal_id: row.proposal_id, timestamp: row.began_at };
        if (row.run_id !== null) {
          data["run_id"] = row.run_id;
          interrupted.run_id = row.run_id;
        }
        if (dispatched.length > 0) interrupted.dispatched = dispatched;
        this.events.append({ kind: EVENT_KINDS.proposalInterrupted, proposal_id: row.proposal_id, timestamp: now, data });
        out.push(interrupted);
      }
      return out;
    });
  }

  /**
   * Actions of the interrupted run with a `dispatch_intent` on record, in
   * first-dispatch order: the intents that name its run id (DECISIONS §20),
   * whatever the clocks said. A row from before schema version 7 names no
   * run, and neither do its intents: those are read as they were, by time
   * (the proposal id's intents since the run began).
   */
  #dispatchedBy(row: ExecutingRow): string[] {
    if (row.run_id === null) {
      return this.#db
        .prepare("SELECT action_id FROM events WHERE proposal_id = ? AND kind = ? AND ts >= ? GROUP BY action_id ORDER BY min(seq)")
        .pluck()
        .all(row.proposal_id, EVENT_KINDS.dispatchIntent, Date.parse(row.began_at)) as string[];
    }
    return this.#db
      .prepare("SELECT action_id FROM events WHERE proposal_id = ? AND kind = ? AND json_extract(data, '$.run_id') = ? GROUP BY action_id ORDER BY min(seq)")
      .pluck()
      .all(row.proposal_id, EVENT_KINDS.dispatchIntent, row.run_id) as string[];
  }

  // --- audit ------------------------------------------------------------------

  /**
   * Verifies the chain (hashes, links, MACs under the audit key), then that
   * every anchor of this database still holds, then that every table the
   * runtime trusts (approvals, postures, proposals, transitions) is what
   * the log says (table-replay.ts), then that the stored state equals the
   * state the log replays to — naming the first row or key that differs.
   */
  verifyChain(options: VerifyOptions = {}): ChainReport {
    // Read in one transaction so a concurrent writer cannot move the head between reads.
    return this.#db.transaction((): ChainReport => {
      const checkpoints = storedCheckpoints(this.#db);
      const verifier = new ChainVerifier(checkpoints, checkpoints.length > 0 ? this.#key(false) : undefined, this.#auditKey);
      const events: CarEvent[] = [];
      for (const row of this.events.storedRows()) {
        if (!verifier.check(row)) break;
        events.push(row.event);
      }
      const recorded = this.events.recordedHead();
      const newest = checkpoints.at(-1)?.checkpoint;
      // A cut through the head (every event removed) leaves the checkpoint naming it: the chain ends there.
      const cutThroughHead = newest !== undefined && recorded !== null && newest.seq === recorded.seq && newest.hash === recorded.hash;
      const report = verifier.finish(cutThroughHead ? null : recorded);
      if (!report.ok) return report;
      const { proposal_id } = options;
      if (proposal_id !== undefined) report.proposal_events = events.filter((e) => e.proposal_id === proposal_id);
      const headSeq = report.head?.seq ?? checkpoints.at(-1)?.checkpoint.seq ?? 0;
      if (options.anchors !== undefined && this.databaseId !== undefined) {
        const firstSeq = events[0]?.seq ?? headSeq + 1;
        const hashAt = (seq: number): string | "removed" | undefined => (seq < firstSeq ? "removed" : events[seq - firstSeq]?.hash);
        const self = { id: this.databaseId, location: this.location };
        const broken = anchorBreak(options.anchors, self, headSeq, hashAt);
        if (broken !== undefined) return { ok: false, verified: report.verified, broken };
        report.anchors = anchorSummary(options.anchors, self);
      }
      const table = tableBreak(events, checkpoints, this.#storedTables(), this.#auditKey);
      if (table !== undefined) return { ok: false, verified: report.verified, broken: { seq: headSeq, ...table } };
      if (checkpoints.length > 0) {
        report.state = {
          compared: false,
          reason: `events up to seq ${checkpoints.at(-1)!.checkpoint.seq} were removed by retention, so the log no longer replays to the whole state`,
        };
        return report;
      }
      const stored = this.state.storedSnapshot();
      const difference = firstStateDifference(replayStateChanges(events), stored);
      if (difference !== undefined) return { ok: false, verified: report.verified, broken: { seq: headSeq, reason: difference.reason, key: difference.key } };
      report.state = { compared: true, keys: Object.keys(stored).length };
      return report;
    })();
  }

  /**
   * Seals the approval and posture rows written before rows had seals (a
   * database from an earlier version), but only when the whole log verifies
   * and vouches for every row of the tables: a row inserted by hand without
   * a seal stays unsealed, and so refused. After retention cut the log, it
   * cannot vouch, and nothing is sealed.
   */
  #sealLegacyRows(): void {
    const unsealed = this.#db
      .prepare("SELECT EXISTS (SELECT 1 FROM approvals WHERE seal IS NULL) OR EXISTS (SELECT 1 FROM postures WHERE seal IS NULL)")
      .pluck()
      .get() as number;
    if (unsealed === 0) return;
    this.atomically(() => {
      if (storedCheckpoints(this.#db).length > 0) return;
      const verifier = new ChainVerifier([], undefined, this.#auditKey);
      const events: CarEvent[] = [];
      for (const row of this.events.storedRows()) {
        if (!verifier.check(row)) return;
        events.push(row.event);
      }
      if (!verifier.finish(this.events.recordedHead()).ok || replayBreak(events, this.#storedTables()) !== undefined) return;
      this.approvals.sealUnsealed();
      this.postures.sealUnsealed();
    });
  }

  /** The tables verification checks against the log, as stored. */
  #storedTables(): StoredTables {
    const transitions = this.#db.prepare("SELECT key, mutation, previous_version, version, proposal_id, action_id FROM transitions ORDER BY id").all() as Omit<
      TransitionRow,
      "timestamp"
    >[];
    return {
      approvals: this.approvals.rows(),
      postures: this.postures.rows(),
      proposals: {
        per: "run",
        rows: this.#db.prepare("SELECT proposal_id, status FROM proposals ORDER BY run").all() as { proposal_id: string; status: string }[],
      },
      transitions: transitions.map((t) => ({ ...t, mutation: parseOrText(t.mutation) })),
      cut_rows: parseCutRows(this.#db.prepare("SELECT value FROM meta WHERE key = ?").pluck().get(CUT_ROWS_KEY) as string | undefined),
    };
  }

  /** Where this database lives, as anchors record it: the file's real path. */
  get location(): string {
    try {
      return realpathSync(this.path);
    } catch {
      return resolve(this.path);
    }
  }

  /** The chain head to keep outside the database (`car audit anchor`); null for an empty log. */
  anchor(): Anchor | null {
    const head = this.events.recordedHead();
    if (head === null || this.databaseId === undefined) return null;
    return { database_id: this.databaseId, database: this.location, seq: head.seq, hash: head.hash, anchored_at: rfc3339(this.#clock.now()) };
  }

  checkpoints(): SignedCheckpoint[] {
    return storedCheckpoints(this.#db);
  }

  /** Applies the configured policy, or `policy` when given (e.g. a one-off `car audit` trim), strictly (no slack). */
  enforceRetention(now: number = this.#clock.now(), policy?: RetentionPolicy): RetentionResult {
    const chosen = policy === undefined ? this.#retention : validateRetention(policy);
    if (chosen === undefined) return { removed: 0, checkpoint: null };
    return this.#enforce(chosen, now, true);
  }

  #enforce(policy: RetentionPolicy, now: number, strict: boolean): RetentionResult {
    return this.atomically(() => {
      const cut = retentionCut(this.#db, policy, now, strict);
      if (cut === undefined) return { removed: 0, checkpoint: null };
      return removeThrough(this.#db, cut, policy, this.#key(true)!, now, this.#storedTables());
    });
  }

  /** Every stored event (oldest first) — for replays and exports; `events.query` is the filtered form. */
  *storedEvents(): IterableIterator<CarEvent> {
    for (const row of this.events.storedRows(false)) yield row.event;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    // A sync still on disk answers proposals waiting for it; its descriptor closes after.
    await this.#groupSync?.drained();
    if (this.#closed) return;
    try {
      // A begun proposal's row goes with its events (a read-only store has neither, and opens no write transaction).
      if (this.#unwrittenBegins.size > 0)
        this.atomically(() => {
          this.#writeBegins();
          this.events.flush();
        });
      else this.events.flush();
    } finally {
      this.#closed = true;
      LIVE_INSTANCES.delete(this.#instance);
      this.events.close();
      this.#db.close();
      this.#groupSync?.close();
    }
  }

  // --- internals --------------------------------------------------------------

  #readDataVersion(): number {
    return this.#dataVersionQuery.get() as number;
  }

  /** Reloads the state cache when another connection committed since we last looked; true when it did. */
  #syncFromOthers(): boolean {
    const version = this.#readDataVersion();
    if (version === this.#dataVersion) return false;
    this.#dataVersion = version;
    this.state.reload();
    return true;
  }

  /** Refuses a commit whose reads or writes another process moved since the proposal saw them. */
  #refuseStale(commit: ProposalCommit): void {
    const seen = this.state.versionsOf([...commit.reads.map((r) => r.key), ...commit.mutations.map((m) => m.key)]);
    if (!this.#syncFromOthers()) return;
    const staleReads = commit.reads.filter((r) => this.state.version(r.key) !== r.version).map((r) => r.key);
    if (staleReads.length > 0) throw commitRefusal("stale_read", staleReads);
    const conflicts = commit.mutations.filter((m) => this.state.version(m.key) !== seen.get(m.key)).map((m) => m.key);
    if (conflicts.length > 0) throw commitRefusal("write_conflict", conflicts);
  }

  /** The database's id, created on first open. */
  #databaseId(readonly: boolean): string | undefined {
    const stored = this.#db.prepare("SELECT value FROM meta WHERE key = 'database_id'").pluck().get() as string | undefined;
    if (stored !== undefined || readonly) return stored;
    const id = randomBytes(16).toString("hex");
    this.#db.prepare("INSERT INTO meta (key, value) VALUES ('database_id', ?) ON CONFLICT (key) DO NOTHING").run(id);
    return this.#db.prepare("SELECT value FROM meta WHERE key = 'database_id'").pluck().get() as string;
  }

  /** The checkpoint HMAC key: the audit key, else from the database (created there on first need when `create`). */
  #key(create: boolean): CheckpointKey | undefined {
    if (this.#keyFile !== undefined) return this.#auditKey;
    const stored = this.#db.prepare("SELECT value FROM meta WHERE key = 'checkpoint_key'").pluck().get() as string | undefined;
    if (stored !== undefined) return checkpointKey(parseHexKey(stored, "the database"));
    if (!create) return undefined;
    const key = checkpointKey(randomBytes(32));
    this.#db.prepare("INSERT INTO meta (key, value) VALUES ('checkpoint_key', ?)").run(key.key.toString("hex"));
    return key;
  }
}

/** A stored JSON column, parsed; its raw text when it is not JSON (so the comparison reports it rather than throwing). */
function parseOrText(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

/**
 * A SQLite-backed `RuntimeStore` at `path` (created when missing): `new
 * Runtime({ store: sqlite("car.db") })`. Call `runtime.recover()` once at
 * start-up to mark proposals a crashed process left executing.
 */
export function sqlite(path: string, options: SqliteStoreOptions = {}): SqliteStore {
  return new SqliteStore(path, options);
}

/** Group commit where it keeps `synchronous = full`'s promise: a writable WAL database in a file. */
function groupSyncFor(db: SqliteDatabase, options: SqliteStoreOptions): WalGroupSync | undefined {
  if (options.readonly === true || options.synchronous === "normal") return undefined;
  if (db.memory || db.pragma("journal_mode", { simple: true }) !== "wal") return undefined;
  return new WalGroupSync(resolve(db.name));
}
