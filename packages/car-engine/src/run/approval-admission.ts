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
import type { Action, ActionProposal, JsonObject } from "@car/ir";
import type { ApprovalDecision, ApprovalGate } from "@car/policy";
import { EVENT_KINDS } from "../events/event.ts";
import type { ApprovalWaits } from "../supervision/approval-waits.ts";
import type { ToolRegistry } from "../tools/tool-registry.ts";
import type { AdmissionFinding } from "./admission.ts";
import { type ApprovalEmit, decideOnRecord } from "./approval-events.ts";

/** A proposal that waits for its approvals instead of being rejected. */
export interface ApprovalWait {
  /** Where the wait is listed and woken (`permission.pending`, `permission.approve`). */
  waits: ApprovalWaits;
  /** How long the proposal may wait in all, ms; then what is undecided is rejected. */
  timeoutMs: number;
  /** Who submitted it, as the wait lists it. */
  asked_by: string;
}

export interface ApprovalAdmissionContext {
  run_id: string;
  proposal_id: string;
  session_id: string | null;
  /** A supervisor escalated the proposal. */
  escalated: boolean;
  wait: ApprovalWait | undefined;
  signal: AbortSignal | undefined;
}

export async function approvalFindings(
  proposal: ActionProposal,
  gate: ApprovalGate,
  tools: ToolRegistry,
  emit: ApprovalEmit,
  allowed: (action: Action, decision: ApprovalDecision) => void,
  ctx: ApprovalAdmissionContext,
): Promise<AdmissionFinding[]> {
  const findings: AdmissionFinding[] = [];
  const deadline = ctx.wait === undefined ? 0 : Date.now() + ctx.wait.timeoutMs;
  const how = { ask: gate.canAsk, everyDecision: false, context: { stage: "admission" }, run_id: ctx.run_id, escalated: ctx.escalated };
  for (let i = 0; i < proposal.actions.length; i++) {
    const action = proposal.actions[i]!;
    const schema = action.tool === undefined ? undefined : tools.get(action.tool)?.schema;
    let d: ApprovalDecision;
    if (ctx.wait !== undefined && !gate.canAsk) {
      const first = await gate.evaluate(action, schema, { run_id: ctx.run_id, spend: true, escalated: ctx.escalated });
      const again = () => gate.evaluate(action, schema, { run_id: ctx.run_id, spend: true, escalated: ctx.escalated });
      d = first.decision === "needs_approval" ? await waitForDecision(action, first, again, emit, ctx, ctx.wait, deadline, { stage: "admission" }) : first;
      if (d === first && d.decision === "deny") emit(EVENT_KINDS.approvalDecided, action.id, decidedData(d));
    } else {
      // With an approver the question is put now, before anything runs; without one the ledger answers.
      d = await decideOnRecord(gate, action, schema, emit, how);
    }
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

function decidedData(d: ApprovalDecision): JsonObject {
  const data: JsonObject = { decision: d.decision, required: d.required, granted: d.granted, fingerprint: d.fingerprint, stage: "admission" };
  if (d.reason !== undefined) data["reason"] = d.reason;
  if (d.record !== undefined) data["reviewer"] = d.record.reviewer;
  return data;
}

/** Where a wait belongs: its run, proposal, session, and what cancels it. */
export interface WaitPlace {
  run_id: string;
  proposal_id: string;
  session_id: string | null;
  signal: AbortSignal | undefined;
}

/**
 * Lists the action as waiting and asks `again` (the gate, reading the
 * ledger) each time it is woken, until a decision answers or the deadline.
 * `approval_requested` opens the wait on the record and `approval_decided`
 * closes it with `wait_ms` and `reviewer`; `context` goes on both.
 */
export async function waitForDecision(
  action: Action,
  first: ApprovalDecision,
  again: () => Promise<ApprovalDecision>,
  emit: ApprovalEmit,
  place: WaitPlace,
  wait: ApprovalWait,
  deadline: number,
  context: JsonObject,
): Promise<ApprovalDecision> {
  const requested: JsonObject = { fingerprint: first.fingerprint, required: first.required, granted: first.granted, ...context, deadline };
  if (action.tool !== undefined) requested["tool"] = action.tool;
  emit(EVENT_KINDS.approvalRequested, action.id, requested);
  const askedAt = Date.now();
  let last = first;
  const answered = await wait.waits.wait(
    {
      fingerprint: first.fingerprint,
      required: first.required,
      granted: first.granted,
      ...(action.tool !== undefined ? { tool: action.tool } : {}),
      parameter_keys: Object.keys(action.parameters).sort(),
      action_id: action.id,
      proposal_id: place.proposal_id,
      run_id: place.run_id,
      session_id: place.session_id,
      asked_by: wait.asked_by,
      created_at: askedAt,
      deadline,
    },
    async () => {
      last = await again();
      if (last.decision === "needs_approval") return undefined;
      return { decision: last.decision, reviewer: last.record?.reviewer ?? "ledger" };
    },
    place.signal,
  );
  const cancelled = place.signal?.aborted === true;
  const waited = { wait_ms: Date.now() - askedAt, reviewer: answered?.reviewer ?? (cancelled ? "cancelled" : "timeout") };
  const d: ApprovalDecision =
    answered !== undefined ? last : { ...first, decision: "deny", reason: cancelled ? "the wait was cancelled" : `no decision within ${wait.timeoutMs} ms` };
  const data: JsonObject = { decision: d.decision, required: d.required, granted: d.granted, fingerprint: d.fingerprint, ...context, ...waited };
  if (d.reason !== undefined) data["reason"] = d.reason;
  emit(EVENT_KINDS.approvalDecided, action.id, data);
  return d;
}
