/**
 * The tier / approval gate at admission (DECISIONS §16): every action is
 * evaluated against the session's standing tier and the approval ledger
 * before anything runs (an approver, when the gate has one, is asked now,
 * and its decisions are recorded). One that needs an approval (or is
 * denied) blocks the whole proposal — a safety hazard is a property of the
 * action set — and its finding names the fingerprint to approve with the
 * required and granted tier. An approval recorded in the ledger makes the
 * re-submission pass. Actions whose parameters hold `$<id>.output`
 * references are evaluated again at dispatch, on their resolved parameters.
 * Each allowed decision goes to `allowed`, so the TraceGate learns of the
 * approvals its `requires_approval` rules look for. A wait for the approver
 * is on the record (`approval_requested` … `approval_decided`), whatever
 * the answer.
 *
 * A proposal submitted with a wait (`ExecuteOptions.approvalWait`) does not
 * fail on `needs_approval`: the action waits in the host's `ApprovalWaits`
 * until a decision on its fingerprint lands in the ledger, or is rejected
 * at the deadline (one deadline for the whole proposal). Nothing runs
 * before every action is decided.
 */
import type { ActionProposal, JsonObject } from "@car/ir";
import type { ApprovalDecision, ApprovalGate, TraceGate } from "@car/policy";
import { EVENT_KINDS } from "../events/event-kinds.ts";
import { type ApprovalEmit, type ApprovalOnRecord, decideOnRecord } from "../gates/approval-on-record.ts";
import { gatedAction } from "../gates/gated-action.ts";
import { heldAtAdmission } from "../gates/refusals.ts";
import { type ApprovalWait, decidedData, type WaitPlace, waitForDecision } from "../gates/approval-wait.ts";
import type { ToolRegistry } from "../tools/tool-registry.ts";
import { traceApproval } from "../trace/trace-steps.ts";
import type { Admission, AdmissionFinding } from "./admission.ts";
import type { AdmissionRecord } from "./admission-record.ts";

export type { ApprovalWait } from "../gates/approval-wait.ts";

/** Who submitted the proposal and how: what a wait is listed under. */
export interface ApprovalAdmissionContext {
  session_id: string | null;
  wait: ApprovalWait | undefined;
  signal: AbortSignal | undefined;
}

/** What every admission decision's events carry. */
const AT_ADMISSION: JsonObject = Object.freeze({ stage: "admission" }) as JsonObject;

/** `escalated`: a supervisor escalated the proposal. */
export async function approvalFindings(
  proposal: ActionProposal,
  gate: ApprovalGate,
  tools: ToolRegistry,
  traceGate: TraceGate,
  admission: Admission,
  record: AdmissionRecord,
  ctx: ApprovalAdmissionContext,
  escalated: boolean,
): Promise<AdmissionFinding[]> {
  const findings: AdmissionFinding[] = [];
  const run_id = record.id;
  const emit: ApprovalEmit = (kind, action_id, data) => record.emit(kind, action_id, data);
  const deadline = ctx.wait === undefined ? 0 : Date.now() + ctx.wait.timeoutMs;
  const how: ApprovalOnRecord = { ask: gate.canAsk, everyDecision: false, context: AT_ADMISSION, run_id, escalated };
  for (let i = 0; i < proposal.actions.length; i++) {
    const action = proposal.actions[i]!;
    const schema = action.tool === undefined ? undefined : tools.get(action.tool)?.schema;
    let d: ApprovalDecision;
    if (ctx.wait !== undefined && !gate.canAsk) {
      const place: WaitPlace = { run_id, proposal_id: proposal.id, session_id: ctx.session_id, signal: ctx.signal };
      const first = await gate.evaluate(action, schema, { run_id, spend: true, escalated });
      const again = () => gate.evaluate(action, schema, { run_id, spend: true, escalated });
      d = first.decision === "needs_approval" ? await waitForDecision(action, first, again, emit, place, ctx.wait, deadline, { stage: "admission" }) : first;
      if (d === first && d.decision === "deny") emit(EVENT_KINDS.approvalDecided, action.id, decidedData(d, { stage: "admission" }));
    } else {
      // With an approver the question is put now, before anything runs; without one the ledger answers.
      d = await decideOnRecord(gate, action, schema, emit, how);
    }
    if (d.decision === "allow") {
      if (action.tool !== undefined) traceApproval(traceGate, run_id, action.tool, d);
      if (d.record?.decision === "approved") admission.approvals.set(action.id, d.record);
      continue;
    }
    record.gated.push(gatedAction(action.id, "admission", d));
    findings.push({ index: i, message: heldAtAdmission(d), code: "approval_denied" });
  }
  return findings;
}
