/**
 * The approval gate's verdict on the record. When the gate asks its
 * approver, `approval_requested` is written just before (fingerprint, the
 * required and granted tier, the tool — never a parameter value) and the
 * `approval_decided` that closes the wait says how long the answer took
 * (`wait_ms`) and who gave it (`reviewer`), so a report can draw the wait as
 * it draws a rate-limit wait. A decision nobody was asked for is recorded
 * only when it refuses, unless the caller records every decision.
 */
import type { Action, JsonObject, ToolSchema } from "@car/ir";
import type { ApprovalDecision, ApprovalGate, ApprovalRecord, ApprovalRequest } from "@car/policy";
import { EVENT_KINDS, type EventKind } from "../events/event-kinds.ts";

export type ApprovalEmit = (kind: EventKind, action_id: string, data: JsonObject) => void;

export interface ApprovalOnRecord {
  /** Ask the approver (`authorize`); otherwise the ledger and the tiers answer alone (`evaluate`). */
  ask: boolean;
  /** Record `allow` decisions nobody was asked for too. */
  everyDecision: boolean;
  /** Fields every event of this decision carries (e.g. `stage`, `compensation`). */
  context: JsonObject;
  /** The approval that admitted the declared form, answering for the resolved one within the standing tier (`AuthorizeOptions.admitted`). */
  admitted?: ApprovalRecord | undefined;
  /** The run the action belongs to: run-scoped decisions answer only within it. */
  run_id: string;
  /** A supervisor escalated the proposal: every action needs a recorded approval. */
  escalated?: boolean;
}

export async function decideOnRecord(
  gate: ApprovalGate,
  action: Action,
  schema: ToolSchema | undefined,
  emit: ApprovalEmit,
  how: ApprovalOnRecord,
): Promise<ApprovalDecision> {
  // The verdict admits an execution: a use-limited approval it rests on spends a use.
  const scope = { run_id: how.run_id, spend: true, escalated: how.escalated === true };
  const d = how.ask ? await authorizeOnRecord(gate, action, schema, emit, how, scope) : await gate.evaluate(action, schema, scope);
  if (d.decision === "allow" && d.waited_ms === undefined && !how.everyDecision) return d;
  const data: JsonObject = { decision: d.decision, required: d.required, granted: d.granted, fingerprint: d.fingerprint, ...how.context };
  if (d.reason !== undefined) data["reason"] = d.reason;
  if (d.waited_ms !== undefined) {
    data["wait_ms"] = d.waited_ms;
    data["reviewer"] = d.record?.reviewer ?? "approver";
  } else if (d.record !== undefined) data["reviewer"] = d.record.reviewer;
  emit(EVENT_KINDS.approvalDecided, action.id, data);
  return d;
}

/** `authorize`, with the question put on the record (`approval_requested`) just before the approver is asked. */
function authorizeOnRecord(
  gate: ApprovalGate,
  action: Action,
  schema: ToolSchema | undefined,
  emit: ApprovalEmit,
  how: ApprovalOnRecord,
  scope: { run_id: string; spend: boolean; escalated: boolean },
): Promise<ApprovalDecision> {
  const asking = (request: ApprovalRequest): void => {
    const data: JsonObject = { fingerprint: request.fingerprint, required: request.required_tier, granted: request.granted_tier, ...how.context };
    if (action.tool !== undefined) data["tool"] = action.tool;
    emit(EVENT_KINDS.approvalRequested, action.id, data);
  };
  return gate.authorize(action, schema, how.admitted === undefined ? { asking, ...scope } : { asking, admitted: how.admitted, ...scope });
}
