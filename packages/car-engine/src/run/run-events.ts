/**
 * The audit events one run appends, in order. Each is stamped with the
 * injected clock (RFC 3339, formatted once per distinct millisecond) and kept
 * so the commit persists exactly what the run emitted.
 */
import { rfc3339 } from "@car/ir";
import type { Clock, JsonObject } from "@car/ir";
import type { CarEvent, EventKind } from "../events/event.ts";
import type { EventLog } from "../events/event-log.ts";

export class RunEvents {
  /** Events appended for this proposal so far, in order (for the commit). */
  readonly appended: CarEvent[] = [];
  readonly #proposalId: string;
  readonly #log: EventLog;
  readonly #clock: Clock;
  #lastStampMs = Number.NaN;
  #lastStamp = "";

  constructor(proposalId: string, log: EventLog, clock: Clock) {
    this.#proposalId = proposalId;
    this.#log = log;
    this.#clock = clock;
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

  emit(kind: EventKind, action_id: string | undefined, data: JsonObject): void {
    const event = action_id === undefined
      ? { kind, proposal_id: this.#proposalId, timestamp: this.stamp(), data }
      : { kind, proposal_id: this.#proposalId, action_id, timestamp: this.stamp(), data };
    this.appended.push(this.#log.append(event));
  }
}
