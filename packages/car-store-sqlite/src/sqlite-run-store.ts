/**
 * Agent run traces in SQLite (`runs` and `run_records`), in the same
 * database file as the log: a trace outlives reconnects and restarts, and
 * `car serve` replays it with `runs.get_trace`. Each append or end is one
 * IMMEDIATE transaction that reads the run's status and turn count and
 * writes the records, so concurrent batches never interleave an index or
 * pass the ceiling.
 */
import type { JsonObject } from "@car/ir";
import {
  type RunAppendOutcome,
  type RunEndOutcome,
  type RunPageKey,
  type RunStart,
  type RunStatus,
  type RunStore,
  type RunSummary,
  runSummary,
  stampTurns,
} from "@car/engine";
import type { SqliteDatabase } from "./schema.ts";
import type { StoreWriter } from "./store-writer.ts";

type RunRow = Omit<RunSummary, "ended_at"> & { ended_at: string | null; record_count: number };

const RUN_COLUMNS = "run_id, agent_id, intent, started_at, ended_at, status, turn_count, record_count";

export class SqliteRunStore implements RunStore {
  readonly #db: SqliteDatabase;
  readonly #writer: StoreWriter;
  readonly #get;
  readonly #insertRecord;
  readonly #updateCounts;

  constructor(db: SqliteDatabase, writer: StoreWriter) {
    this.#db = db;
    this.#writer = writer;
    this.#get = db.prepare(`SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = ?`);
    this.#insertRecord = db.prepare("INSERT INTO run_records (run_id, seq, body) VALUES (?, ?, ?)");
    this.#updateCounts = db.prepare("UPDATE runs SET turn_count = ?, record_count = ? WHERE run_id = ?");
  }

  start(run: RunStart): { summary: RunSummary; created: boolean } {
    return this.#writer.atomically(() => {
      const existing = this.#row(run.run_id);
      if (existing !== undefined) return { summary: runSummary(existing), created: false };
      this.#db
        .prepare("INSERT INTO runs (run_id, agent_id, intent, started_at, status, turn_count, record_count) VALUES (?, ?, ?, ?, 'in_progress', 0, 1)")
        .run(run.run_id, run.agent_id, run.intent, run.started_at);
      this.#insertRecord.run(run.run_id, 0, JSON.stringify(run.record));
      return { summary: runSummary(this.#row(run.run_id)!), created: true };
    });
  }

  appendTurns(run_id: string, turns: readonly JsonObject[], ceiling: number): RunAppendOutcome {
    return this.#writer.atomically(() => {
      const row = this.#row(run_id);
      if (row === undefined) return { ok: false, dropped: "run_not_found" };
      if (row.status !== "in_progress") return { ok: false, dropped: "run_terminal" };
      const base = row.turn_count;
      if (base + turns.length > ceiling) return { ok: false, dropped: "run_turn_limit" };
      const records = stampTurns(turns, base);
      records.forEach((record, i) => this.#insertRecord.run(run_id, row.record_count + i, JSON.stringify(record)));
      this.#updateCounts.run(base + records.length, row.record_count + records.length, run_id);
      return { ok: true, base_index: base, count: records.length, records, turn_count: base + records.length };
    });
  }

  end(run_id: string, record: JsonObject, status: Exclude<RunStatus, "in_progress">, ended_at: string): RunEndOutcome {
    return this.#writer.atomically(() => {
      const row = this.#row(run_id);
      if (row === undefined) return { ok: false, refused: "run_not_found" };
      if (row.status !== "in_progress") return { ok: false, refused: "run_terminal" };
      this.#insertRecord.run(run_id, row.record_count, JSON.stringify(record));
      this.#db.prepare("UPDATE runs SET status = ?, ended_at = ?, record_count = record_count + 1 WHERE run_id = ?").run(status, ended_at, run_id);
      return { ok: true, summary: runSummary(this.#row(run_id)!), record };
    });
  }

  get(run_id: string): RunSummary | undefined {
    const row = this.#row(run_id);
    return row === undefined ? undefined : runSummary(row);
  }

  list(agent_id: string): RunSummary[] {
    const rows = this.#db.prepare(`SELECT ${RUN_COLUMNS} FROM runs WHERE agent_id = ? ORDER BY started_at DESC, rowid DESC`).all(agent_id) as RunRow[];
    return rows.map(runSummary);
  }

  listPage(agent_id: string, after: RunPageKey | undefined, limit: number): RunSummary[] {
    // The row value comparison is the paging order's "strictly after": older, or as old with a smaller run id.
    const rows = (
      after === undefined
        ? this.#db.prepare(`SELECT ${RUN_COLUMNS} FROM runs WHERE agent_id = ? ORDER BY started_at DESC, run_id DESC LIMIT ?`).all(agent_id, limit)
        : this.#db
            .prepare(`SELECT ${RUN_COLUMNS} FROM runs WHERE agent_id = ? AND (started_at, run_id) < (?, ?) ORDER BY started_at DESC, run_id DESC LIMIT ?`)
            .all(agent_id, after.started_at, after.run_id, limit)
    ) as RunRow[];
    return rows.map(runSummary);
  }

  records(run_id: string, from: number, limit?: number): JsonObject[] {
    const rows = this.#db
      .prepare("SELECT body FROM run_records WHERE run_id = ? AND seq >= ? ORDER BY seq LIMIT ?")
      .pluck()
      .all(run_id, from, limit ?? -1) as string[];
    return rows.map((body) => JSON.parse(body) as JsonObject);
  }

  #row(run_id: string): RunRow | undefined {
    return this.#get.get(run_id) as RunRow | undefined;
  }
}
