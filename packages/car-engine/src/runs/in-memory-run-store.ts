/**
 * Run traces in memory: what a runtime without a database keeps (`car serve
 * --db :memory:`). Same rules as the durable stores; gone with the process.
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
  runPageBefore,
  stampTurns,
} from "./run-store.ts";

interface HeldRun {
  summary: RunSummary;
  records: JsonObject[];
}

export class InMemoryRunStore implements RunStore {
  readonly #runs = new Map<string, HeldRun>();

  start(run: RunStart): { summary: RunSummary; created: boolean } {
    const existing = this.#runs.get(run.run_id);
    if (existing !== undefined) return { summary: { ...existing.summary }, created: false };
    const summary: RunSummary = {
      run_id: run.run_id,
      agent_id: run.agent_id,
      intent: run.intent,
      started_at: run.started_at,
      status: "in_progress",
      turn_count: 0,
    };
    this.#runs.set(run.run_id, { summary, records: [structuredClone(run.record)] });
    return { summary: { ...summary }, created: true };
  }

  appendTurns(run_id: string, turns: readonly JsonObject[], ceiling: number): RunAppendOutcome {
    const run = this.#runs.get(run_id);
    if (run === undefined) return { ok: false, dropped: "run_not_found" };
    if (run.summary.status !== "in_progress") return { ok: false, dropped: "run_terminal" };
    const base = run.summary.turn_count;
    if (base + turns.length > ceiling) return { ok: false, dropped: "run_turn_limit" };
    const records = stampTurns(turns, base);
    run.records.push(...structuredClone(records));
    run.summary.turn_count = base + records.length;
    return { ok: true, base_index: base, count: records.length, records, turn_count: run.summary.turn_count };
  }

  end(run_id: string, record: JsonObject, status: Exclude<RunStatus, "in_progress">, ended_at: string): RunEndOutcome {
    const run = this.#runs.get(run_id);
    if (run === undefined) return { ok: false, refused: "run_not_found" };
    if (run.summary.status !== "in_progress") return { ok: false, refused: "run_terminal" };
    run.summary.status = status;
    run.summary.ended_at = ended_at;
    run.records.push(structuredClone(record));
    return { ok: true, summary: { ...run.summary }, record };
  }

  get(run_id: string): RunSummary | undefined {
    const run = this.#runs.get(run_id);
    return run === undefined ? undefined : { ...run.summary };
  }

  list(agent_id: string): RunSummary[] {
    return [...this.#runs.values()]
      .filter((r) => r.summary.agent_id === agent_id)
      .map((r) => ({ ...r.summary }))
      .sort((a, b) => (a.started_at < b.started_at ? 1 : a.started_at > b.started_at ? -1 : 0));
  }

  listPage(agent_id: string, after: RunPageKey | undefined, limit: number): RunSummary[] {
    return [...this.#runs.values()]
      .filter((r) => r.summary.agent_id === agent_id && (after === undefined || runPageBefore(after, r.summary)))
      .map((r) => ({ ...r.summary }))
      .sort((a, b) => (runPageBefore(a, b) ? -1 : runPageBefore(b, a) ? 1 : 0))
      .slice(0, limit);
  }

  records(run_id: string, from: number, limit?: number): JsonObject[] {
    const run = this.#runs.get(run_id);
    if (run === undefined) return [];
    return structuredClone(run.records.slice(from, limit === undefined ? undefined : from + limit));
  }
}
