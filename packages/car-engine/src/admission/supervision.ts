/**
 * The supervision step of admission: asks the host's supervisor, and when
 * it parks the proposal, puts the wait on the audit chain
 * (`supervision_parked` … `supervision_decided`, the intent's id on both)
 * and turns the verdict into what the rest of admission needs: a
 * whole-proposal finding for `deny`, the escalation flag for `escalate`.
 */
import type { JsonObject } from "@car/ir";
import { EVENT_KINDS, type EventKind } from "../events/event-kinds.ts";
import type { AdmissionFinding } from "./admission.ts";
import type { Clock } from "@car/ir";
import type { ParkedProposal, SupervisionRequest, Supervisor } from "../supervision/supervisor.ts";

export interface SupervisionOutcome {
  findings: AdmissionFinding[];
  /** The supervisor escalated: every action needs a recorded approval. */
  escalated: boolean;
}

const UNWATCHED: SupervisionOutcome = Object.freeze({ findings: [], escalated: false }) as SupervisionOutcome;

/** The outcome at once when nobody watches the proposal (no promise: most proposals), else once the supervisor decides. */
export function supervise(
  supervisor: Supervisor,
  request: SupervisionRequest,
  clock: Clock,
  emit: (kind: EventKind, data: JsonObject) => void,
): SupervisionOutcome | Promise<SupervisionOutcome> {
  const parked = supervisor(request);
  return parked === undefined ? UNWATCHED : decided(parked, clock, emit);
}

async function decided(parked: ParkedProposal, clock: Clock, emit: (kind: EventKind, data: JsonObject) => void): Promise<SupervisionOutcome> {
  const parkedAt = clock.now();
  emit(EVENT_KINDS.supervisionParked, { intent_id: parked.intent_id, ...parked.record });
  const d = await parked.decision;
  const data: JsonObject = { intent_id: parked.intent_id, decision: d.kind, reviewer: d.reviewer, wait_ms: clock.now() - parkedAt };
  if (d.reason !== undefined) data["reason"] = d.reason;
  emit(EVENT_KINDS.supervisionDecided, data);
  if (d.kind === "deny") return { findings: [{ index: -1, message: `denied by supervisor: ${d.reason}`, code: "approval_denied" }], escalated: false };
  return { findings: [], escalated: d.kind === "escalate" };
}
