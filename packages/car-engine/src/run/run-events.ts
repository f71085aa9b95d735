/**
 * The audit events one run appends, in order. Each is stamped with the
 * injected clock (RFC 3339, formatted once per distinct millisecond), names
 * its run in `data.run_id` (DECISIONS §20: the proposal id is only the
 * proposer's label, so two runs of one id are told apart by this), and is
 * kept so the commit persists exactly what the run emitted.
 */
import { rfc3339 } from "@car/ir";
import type { Clock, JsonObject } from "@car/ir";
import type { CarEvent, NewEvent } from "../events/event.ts";
import type { EventDataOf, EventKind } from "../events/event-kinds.ts";
import type { EventLog } from "../events/event-log.ts";

export class RunEvents {
  /** Events appended for this proposal so far, in order (for the commit). */
  readonly appended: CarEvent[] = [];
  readonly #proposalId: string;
  readonly #runId: string;
  /** The stamped copy of each shared (frozen) `data` this run emitted. */
  readonly #shared = new WeakMap<JsonObject, JsonObject>();
  readonly #log: EventLog;
  readonly #clock: Clock;
  readonly #observer: ((event: CarEvent) => void) | undefined;
  #lastStampMs = Number.NaN;
  #lastStamp = "";

  /** `observer` sees every event after it is appended (the run's tracer, when tracing is on). */
  constructor(proposalId: string, runId: string, log: EventLog, clock: Clock, observer?: (event: CarEvent) => void) {
    this.#proposalId = proposalId;
    this.#runId = runId;
    this.#log = log;
    this.#clock = clock;
    this.#observer = observer;
  }

  /**
   * `data` with the run id, as a copy: the writer's object is not changed.
   * A frozen `data` is one writers share between equal events (`outcomes.ts`,
   * `pipeline.ts`), so its stamped copy is kept, frozen, and shared the same
   * way within the run.
   */
  #stamped(data: JsonObject): JsonObject {
    if (!Object.isFrozen(data)) return { ...data, run_id: this.#runId };
    let stamped = this.#shared.get(data);
    if (stamped === undefined) this.#shared.set(data, (stamped = Object.freeze({ ...data, run_id: this.#runId })));
    return stamped;
  }

  /** RFC 3339 of the clock, formatted once per distinct millisecond. */
  stamp(): string {
    const ms = this.#clock.now();
    if (ms !== this.#lastStampMs) {
      this.#lastStampMs = ms;
      this.#lastStamp = rfc3339(ms);
    }
    return this.#lastStamp;
  }

  /** Takes back appended events that never reached storage (`EventLog.retract`): they leave the commit too. */
  retract(which: (event: CarEvent) => boolean): void {
    const gone = new Set(this.appended.filter(which));
    if (gone.size === 0) return;
    this.#log.retract?.(gone);
    const kept = this.appended.filter((e) => !gone.has(e));
    this.appended.length = 0;
    this.appended.push(...kept);
  }

  /** Whether the log can write an event durably before the run goes on (`EventLog.persist`). */
  get durable(): boolean {
    return this.#log.persist !== undefined;
  }

  /** Emits the event and makes it (and everything before it) durable: done when this returns, or when its promise resolves. */
  emitDurable(kind: EventKind, action_id: string, data: JsonObject): void | Promise<void> {
    this.emit(kind, action_id, data);
    return this.#log.persist!();
  }

  /** Appends one event of this run; its `data` is `data` with the run's `run_id` (over any the writer gave). */
  emit<K extends EventKind>(kind: K, action_id: string | undefined, data: EventDataOf<K>): void {
    const stamped = this.#stamped(data as JsonObject);
    // `seq` is the log's to set; it is in the literal (last, where the log would add it) so setting it does not grow the object.
    const event: NewEvent & { seq: number } =
      action_id === undefined
        ? { kind, proposal_id: this.#proposalId, timestamp: this.stamp(), data: stamped, seq: 0 }
        : { kind, proposal_id: this.#proposalId, action_id, timestamp: this.stamp(), data: stamped, seq: 0 };
    const appended = this.#log.append(event);
    this.appended.push(appended);
    if (this.#observer !== undefined) this.#observer(appended);
  }
}
