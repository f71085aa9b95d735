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
 */
import type { ActionProposal } from "@car/ir";
import type { ApprovalGate, TraceGate } from "@car/policy";
import { decideOnRecord } from "../gates/approval-on-record.ts";
import { gatedAction } from "../gates/gated-action.ts";
import { heldAtAdmission } from "../gates/refusals.ts";
import type { ToolRegistry } from "../tools/tool-registry.ts";
import { traceApproval } from "../trace/trace-steps.ts";
import type { Admission, AdmissionFinding } from "./admission.ts";
import type { AdmissionRecord } from "./admission-record.ts";

export async function approvalFindings(
  proposal: ActionProposal,
  gate: ApprovalGate,
  tools: ToolRegistry,
  traceGate: TraceGate,
  admission: Admission,
  record: AdmissionRecord,
): Promise<AdmissionFinding[]> {
  const findings: AdmissionFinding[] = [];
  const run_id = record.id;
  const emit = record.emit.bind(record);
  for (let i = 0; i < proposal.actions.length; i++) {
    const action = proposal.actions[i]!;
    const schema = action.tool === undefined ? undefined : tools.get(action.tool)?.schema;
    // With an approver the question is put now, before anything runs; without one the ledger answers.
    const d = await decideOnRecord(gate, action, schema, emit, { ask: gate.canAsk, everyDecision: false, context: { stage: "admission" }, run_id });
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
