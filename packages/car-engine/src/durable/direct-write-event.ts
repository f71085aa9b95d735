/**
 * A write to durable state made outside any proposal — `state.set` over the
 * WebSocket, `car run --state` seeding, a tenant's write, a host's direct
 * `runtime.state.set` — is on the record like a proposal's: a `state_changed`
 * event with `proposal_id: null`, appended in the transaction that writes
 * the value, which `replayStateChanges` applies where it stands.
 */
import type { JsonObject } from "@car/ir";
import type { NewEvent } from "../events/event.ts";
import { EVENT_KINDS } from "../events/event.ts";
import type { StateTransition } from "../store/state-store.ts";

export function directWriteEvent(t: StateTransition): NewEvent {
  const data: JsonObject =
    t.mutation.op === "set" ? { key: t.key, op: "set", value: t.mutation.value, version: t.version } : { key: t.key, op: "delete", version: t.version };
  return { kind: EVENT_KINDS.stateChanged, proposal_id: null, timestamp: t.timestamp, data };
}
