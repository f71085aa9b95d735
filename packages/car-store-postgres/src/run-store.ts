/**
 * Agent run traces on PostgreSQL (`car_runs`, `car_run_records`), shared by
 * every runtime on the database. An append or an end locks the run's row
 * (`FOR UPDATE`) for its transaction, so concurrent batches — from this
 * runtime or another — never interleave an index or pass the ceiling.
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
import type { PoolClient } from "pg";
import type { AuditedTransaction, ReadQuery } from "./audited-transaction.ts";

type RunRow = Omit<RunSummary, "ended_at"> & { ended_at: string | null; record_count: number };

const RUN_COLUMNS = "run_id, agent_id, intent, started_at, ended_at, status, turn_count, record_count";

async function lockedRun(client: PoolClient, run_id: string): Promise<RunRow | undefined> {
  const { rows } = await client.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM car_runs WHERE run_id = $1 FOR UPDATE`, [run_id]);
  return rows[0];
}

async function insertRecords(client: PoolClient, run_id: string, from: number, records: readonly JsonObject[]): Promise<void> {
  if (records.length === 0) return;
  await client.query("INSERT INTO car_run_records (run_id, seq, body) SELECT $1, $2 + n - 1, body FROM unnest($3::text[]) WITH ORDINALITY AS t(body, n)", [
    run_id,
    from,
    records.map((r) => JSON.stringify(r)),
  ]);
}

export class PostgresRunStore implements RunStore {
  readonly #read: ReadQuery;
  readonly #transaction: AuditedTransaction;

  constructor(read: ReadQuery, transaction: AuditedTransaction) {
    this.#read = read;
    this.#transaction = transaction;
  }

  start(run: RunStart): Promise<{ summary: RunSummary; created: boolean }> {
    return this.#transaction(async (client) => {
      const inserted = await client.query<RunRow>(
        `INSERT INTO car_runs (run_id, agent_id, intent, started_at, status, turn_count, record_count) VALUES ($1, $2, $3, $4, 'in_progress', 0, 1)
         ON CONFLICT (run_id) DO NOTHING RETURNING ${RUN_COLUMNS}`,
        [run.run_id, run.agent_id, run.intent, run.started_at],
      );
      const created = inserted.rows[0];
      if (created === undefined) return { summary: runSummary((await lockedRun(client, run.run_id))!), created: false };
      await insertRecords(client, run.run_id, 0, [run.record]);
      return { summary: runSummary(created), created: true };
    });
  }

  appendTurns(run_id: string, turns: readonly JsonObject[], ceiling: number): Promise<RunAppendOutcome> {
    return this.#transaction(async (client): Promise<RunAppendOutcome> => {
      const row = await lockedRun(client, run_id);
      if (row === undefined) return { ok: false, dropped: "run_not_found" };
      if (row.status !== "in_progress") return { ok: false, dropped: "run_terminal" };
      const base = row.turn_count;
      if (base + turns.length > ceiling) return { ok: false, dropped: "run_turn_limit" };
      const records = stampTurns(turns, base);
      await insertRecords(client, run_id, row.record_count, records);
      await client.query("UPDATE car_runs SET turn_count = $2, record_count = $3 WHERE run_id = $1", [
        run_id,
        base + records.length,
        row.record_count + records.length,
      ]);
      return { ok: true, base_index: base, count: records.length, records, turn_count: base + records.length };
    });
  }

  end(run_id: string, record: JsonObject, status: Exclude<RunStatus, "in_progress">, ended_at: string): Promise<RunEndOutcome> {
    return this.#transaction(async (client): Promise<RunEndOutcome> => {
      const row = await lockedRun(client, run_id);
      if (row === undefined) return { ok: false, refused: "run_not_found" };
      if (row.status !== "in_progress") return { ok: false, refused: "run_terminal" };
      await insertRecords(client, run_id, row.record_count, [record]);
      const { rows } = await client.query<RunRow>(
        `UPDATE car_runs SET status = $2, ended_at = $3, record_count = record_count + 1 WHERE run_id = $1 RETURNING ${RUN_COLUMNS}`,
        [run_id, status, ended_at],
      );
      return { ok: true, summary: runSummary(rows[0]!), record };
    });
  }

  async get(run_id: string): Promise<RunSummary | undefined> {
    const { rows } = await this.#read<RunRow>(`SELECT ${RUN_COLUMNS} FROM car_runs WHERE run_id = $1`, [run_id]);
    return rows[0] === undefined ? undefined : runSummary(rows[0]);
  }

  async list(agent_id: string): Promise<RunSummary[]> {
    const { rows } = await this.#read<RunRow>(`SELECT ${RUN_COLUMNS} FROM car_runs WHERE agent_id = $1 ORDER BY started_at DESC, ord DESC`, [agent_id]);
    return rows.map(runSummary);
  }

  async listPage(agent_id: string, after: RunPageKey | undefined, limit: number): Promise<RunSummary[]> {
    // The row value comparison is the paging order's "strictly after"; COLLATE "C" compares as the other stores do (by code point).
    const { rows } =
      after === undefined
        ? await this.#read<RunRow>(
            `SELECT ${RUN_COLUMNS} FROM car_runs WHERE agent_id = $1 ORDER BY started_at COLLATE "C" DESC, run_id COLLATE "C" DESC LIMIT $2`,
            [agent_id, limit],
          )
        : await this.#read<RunRow>(
            `SELECT ${RUN_COLUMNS} FROM car_runs WHERE agent_id = $1 AND (started_at COLLATE "C", run_id COLLATE "C") < ($2 COLLATE "C", $3 COLLATE "C") ORDER BY started_at COLLATE "C" DESC, run_id COLLATE "C" DESC LIMIT $4`,
            [agent_id, after.started_at, after.run_id, limit],
          );
    return rows.map(runSummary);
  }

  async records(run_id: string, from: number, limit?: number): Promise<JsonObject[]> {
    const { rows } = await this.#read<{ body: string }>("SELECT body FROM car_run_records WHERE run_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3", [
      run_id,
      from,
      limit ?? null,
    ]);
    return rows.map((r) => JSON.parse(r.body) as JsonObject);
  }
}
