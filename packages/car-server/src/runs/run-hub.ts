/**
 * The server's live side of agent run traces (reference § runs), shared by
 * every connection over one `RunStore` (the database's, or memory): the
 * per-run lock that appends, ends and subscriptions take, so a subscriber's
 * snapshot and its stream neither miss nor repeat a turn; the fan-out of
 * `runs.trace.event`; and who is producing each run, so a producer that
 * disconnects without `runs.complete` leaves an `Incomplete` marker after a
 * grace window (long enough for an in-flight `runs.complete`, or — for a
 * producer that negotiated `runs.resume.v1` — for a replacement to resume).
 */
import { type JsonObject, type JsonValue, rfc3339 } from "@car/ir";
import { RUN_TURN_CEILING, type RunAppendOutcome, type RunEndOutcome, type RunStatus, type RunStore, type RunSummary } from "@car/engine";

/** How a subscriber receives `runs.trace.event`: one per connection. */
export interface RunSubscriber {
  notify(method: string, params: JsonValue): void;
}

/** A connection producing a run: the hub's handle on it. */
export interface RunProducer {
  readonly id: string;
  /** Whether it negotiated `runs.resume.v1` (a longer lease after it goes). */
  readonly resumable: boolean;
}

/** A producer gone without `runs.complete`: its run is marked `Incomplete` when the timer fires. */
interface Orphan {
  timer: NodeJS.Timeout;
  /** The producer that left, for `resumed_from_client_id`. */
  from: string;
}

export interface RunHubOptions {
  /** The grace after a legacy producer's disconnect (default 250 ms). */
  graceMs?: number;
  /** The resume lease after a `runs.resume.v1` producer's disconnect (default 10 s). */
  resumeLeaseMs?: number;
  now?: () => number;
}

export class RunHub {
  readonly store: RunStore;
  readonly #graceMs: number;
  readonly #leaseMs: number;
  readonly #now: () => number;
  readonly #locks = new Map<string, Promise<unknown>>();
  readonly #subscribers = new Map<string, Set<RunSubscriber>>();
  readonly #producers = new Map<string, RunProducer>();
  readonly #orphans = new Map<string, Orphan>();
  #closed = false;

  constructor(store: RunStore, options: RunHubOptions = {}) {
    this.store = store;
    this.#graceMs = options.graceMs ?? 250;
    this.#leaseMs = options.resumeLeaseMs ?? 10_000;
    this.#now = options.now ?? Date.now;
  }

  /** Runs `work` alone for `run_id`: appends, ends and subscription snapshots of one run never interleave. */
  locked<T>(run_id: string, work: () => T | Promise<T>): Promise<T> {
    const before = this.#locks.get(run_id) ?? Promise.resolve();
    const mine = before.then(work, work);
    const tail = mine.catch(() => {});
    this.#locks.set(run_id, tail);
    void tail.then(() => {
      if (this.#locks.get(run_id) === tail) this.#locks.delete(run_id);
    });
    return mine;
  }

  nowText(): string {
    return rfc3339(this.#now());
  }

  /** Marks `producer` as the live connection producing `run_id` (a start, an idempotent re-start, a resume). */
  produce(run_id: string, producer: RunProducer): void {
    this.#producers.set(run_id, producer);
    const orphan = this.#orphans.get(run_id);
    if (orphan !== undefined) {
      clearTimeout(orphan.timer);
      this.#orphans.delete(run_id);
    }
  }

  /** The live producer of `run_id`, if one is connected. */
  producerOf(run_id: string): RunProducer | undefined {
    return this.#producers.get(run_id);
  }

  /** The producer that left `run_id` within its lease, if the run is waiting for a resume. */
  orphanedFrom(run_id: string): string | undefined {
    return this.#orphans.get(run_id)?.from;
  }

  /** Appends turns under the run's lock and streams each to the run's subscribers. */
  append(run_id: string, agent_id: string, turns: readonly JsonObject[]): Promise<RunAppendOutcome> {
    return this.locked(run_id, async () => {
      const outcome = await this.store.appendTurns(run_id, turns, RUN_TURN_CEILING);
      if (outcome.ok) {
        outcome.records.forEach((record, i) => {
          this.#fanout(run_id, { run_id, agent_id, record, cursor: outcome.base_index + i + 1, status: "in_progress" });
        });
      }
      return outcome;
    });
  }

  /** Ends the run under its lock (first terminal wins) and streams the `ended` record. */
  end(run_id: string, record: JsonObject, status: Exclude<RunStatus, "in_progress">): Promise<RunEndOutcome> {
    return this.locked(run_id, async () => {
      const outcome = await this.store.end(run_id, record, status, this.nowText());
      if (outcome.ok) this.afterEnd(run_id, outcome.summary, record);
      return outcome;
    });
  }

  /** What follows a run's end (for a caller that ended it under the run's lock): no producer any more, and the `ended` record streamed. */
  afterEnd(run_id: string, summary: RunSummary, record: JsonObject): void {
    this.#producers.delete(run_id);
    this.#fanout(run_id, { run_id, agent_id: summary.agent_id, record, cursor: summary.turn_count, status: summary.status });
  }

  /** Streams the `started` record (a subscriber cannot usually see it: it subscribes after the run exists). */
  announceStart(summary: RunSummary, record: JsonObject): void {
    this.#fanout(summary.run_id, { run_id: summary.run_id, agent_id: summary.agent_id, record, cursor: 0, status: summary.status });
  }

  /**
   * Snapshots the run's turns and registers `subscriber` under the run's
   * lock, so every turn appended later arrives as an event and none twice.
   */
  subscribe(summary: RunSummary, subscriber: RunSubscriber): Promise<{ turns: JsonObject[]; status: RunStatus }> {
    return this.locked(summary.run_id, async () => {
      const current = (await this.store.get(summary.run_id)) ?? summary;
      const records = await this.store.records(summary.run_id, 0);
      const turns = records.filter((r) => r["record"] === "turn" || r["record"] === "model_turn");
      let set = this.#subscribers.get(summary.run_id);
      if (set === undefined) this.#subscribers.set(summary.run_id, (set = new Set()));
      set.add(subscriber);
      return { turns, status: current.status };
    });
  }

  /** Drops `subscriber`'s subscription to `run_id`; whether there was one. */
  unsubscribe(run_id: string, subscriber: RunSubscriber): boolean {
    const set = this.#subscribers.get(run_id);
    const removed = set?.delete(subscriber) ?? false;
    if (set !== undefined && set.size === 0) this.#subscribers.delete(run_id);
    return removed;
  }

  /**
   * A connection closed: its subscriptions go, and each run it was producing
   * without having completed it is marked `Incomplete` after the grace (or
   * the resume lease) unless it is completed or resumed first.
   */
  disconnect(subscriber: RunSubscriber, producer: RunProducer): void {
    for (const [run_id, set] of this.#subscribers) {
      set.delete(subscriber);
      if (set.size === 0) this.#subscribers.delete(run_id);
    }
    for (const [run_id, live] of this.#producers) {
      if (live.id !== producer.id) continue;
      this.#producers.delete(run_id);
      if (this.#closed) continue;
      const timer = setTimeout(() => void this.#abandon(run_id), producer.resumable ? this.#leaseMs : this.#graceMs);
      timer.unref();
      this.#orphans.set(run_id, { timer, from: producer.id });
    }
  }

  /** At shutdown: every run still produced or waiting for a resume is marked `Incomplete` now, and no lease starts again. */
  async close(): Promise<void> {
    this.#closed = true;
    const runs = [...new Set([...this.#producers.keys(), ...this.#orphans.keys()])];
    for (const orphan of this.#orphans.values()) clearTimeout(orphan.timer);
    this.#producers.clear();
    await Promise.allSettled(runs.map((run_id) => this.#abandon(run_id)));
  }

  async #abandon(run_id: string): Promise<void> {
    this.#orphans.delete(run_id);
    if (this.#producers.has(run_id)) return;
    await this.end(
      run_id,
      { record: "ended", termination: "incomplete", reason: "the producing connection closed without runs.complete", timestamp: this.nowText() },
      "incomplete",
    ).catch(() => {});
  }

  #fanout(run_id: string, event: JsonObject): void {
    const set = this.#subscribers.get(run_id);
    if (set === undefined) return;
    for (const subscriber of set) subscriber.notify("runs.trace.event", event);
  }
}
