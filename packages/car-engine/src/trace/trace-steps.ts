/**
 * The runtime's side of the TraceGate: what it reports into the trace and
 * how it asks. Every tool call that passes the other gates is judged here as
 * the last step before dispatch (and recorded as dispatched in the same
 * synchronous step); a success, and an approval a human gave, are recorded
 * as they happen. The operation fingerprint is computed only for a call some
 * rule actually governs. Everything is keyed by the run id (DECISIONS §20).
 */
import type { Action, PolicyViolation } from "@car/ir";
import { operationFingerprint } from "@car/policy";
import type { ApprovalDecision, TraceGate } from "@car/policy";

export function admitToTrace(gate: TraceGate, run_id: string, action: Action): PolicyViolation[] {
  const tool = action.tool!;
  if (!gate.governs(tool)) {
    gate.observe({ type: "dispatched", tool, run_id });
    return [];
  }
  return gate.admit({ tool, action_id: action.id, run_id, fingerprint: operationFingerprint(action) });
}

export function traceSuccess(gate: TraceGate, run_id: string, tool: string): void {
  gate.observe({ type: "succeeded", tool, run_id });
}

/** An approval gate's `allow` that rests on a recorded human approval enters the trace as an approval of that operation. */
export function traceApproval(gate: TraceGate, run_id: string, tool: string, decision: ApprovalDecision): void {
  if (decision.decision === "allow" && decision.record?.decision === "approved") {
    gate.observe({ type: "approved", tool, run_id, fingerprint: decision.fingerprint });
  }
}
