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
import type { Action, ActionProposal } from "@car/ir";
import type { ApprovalDecision, ApprovalGate } from "@car/policy";
import type { ToolRegistry } from "../tools/tool-registry.ts";
import type { AdmissionFinding } from "./admission.ts";
import { type ApprovalEmit, decideOnRecord } from "./approval-events.ts";

export async function approvalFindings(
  proposal: ActionProposal,
  gate: ApprovalGate,
  tools: ToolRegistry,
  emit: ApprovalEmit,
  allowed: (action: Action, decision: ApprovalDecision) => void,
  run_id: string,
): Promise<AdmissionFinding[]> {
  const findings: AdmissionFinding[] = [];
  for (let i = 0; i < proposal.actions.length; i++) {
    const action = proposal.actions[i]!;
    const schema = action.tool === undefined ? undefined : tools.get(action.tool)?.schema;
    // With an approver the question is put now, before anything runs; without one the ledger answers.
    const d = await decideOnRecord(gate, action, schema, emit, { ask: gate.canAsk, everyDecision: false, context: { stage: "admission" }, run_id });
    if (d.decision === "allow") {
      allowed(action, d);
      continue;
    }
    const verdict = d.decision === "deny" ? "denied by approval gate" : "needs approval";
    findings.push({
      index: i,
      message: `${verdict}: fingerprint ${d.fingerprint} requires ${d.required}, granted ${d.granted}${d.reason !== undefined ? ` (${d.reason})` : ""}`,
    });
  }
  return findings;
}
