/**
 * What admission writes to once the proposal's record has begun: the run it
 * begins under (its id is what "this proposal" means to trace rules and
 * run-scoped approvals, DECISIONS §20), the run's events, and the list of
 * actions the approval gate held, which the run's report carries.
 */
import type { JsonObject } from "@car/ir";
import type { EventKind } from "../events/event-kinds.ts";
import type { GatedAction } from "../gates/gated-action.ts";

export interface AdmissionRecord {
  readonly id: string;
  emit(kind: EventKind, action_id: string | undefined, data: JsonObject): void;
  readonly gated: GatedAction[];
}
