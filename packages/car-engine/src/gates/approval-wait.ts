/**
 * Approvals that wait (issue "humans and supervisors in the loop"): an
 * action that needs an approval, in a run submitted with a wait, is listed
 * in the host's `ApprovalWaits` and re-decided from the ledger each time it
 * is woken, until a decision lands or its deadline passes — at admission
 * for the declared form, at dispatch for a resolved one (DECISIONS §22).
 */
import type { Action, JsonObject, ToolSchema } from "@car/ir";
import type { ApprovalDecision, ApprovalGate, ApprovalRecord } from "@car/policy";
import { EVENT_KINDS } from "../events/event-kinds.ts";
import type { ApprovalWaits } from "../supervision/approval-waits.ts";
import type { ApprovalEmit } from "./approval-on-record.ts";

/** A proposal that waits for its approvals instead of being rejected. */
export interface ApprovalWait {
  /** Where the wait is listed and woken (`permission.pending`, `permission.approve`). */
  waits: ApprovalWaits;
  /** How long the proposal may wait in all, ms; then what is undecided is rejected. */
  timeoutMs: number;
  /** Who submitted it, as the wait lists it. */
  asked_by: string;
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

/**
 * The gate's verdict on a form admission did not judge (a resolved one), in
 * a run that waits: a decision the ledger does not hold yet is waited for,
 * with its own deadline (the run's wait, from now).
 */
export async function decideWaiting(
  gate: ApprovalGate,
  subject: Action,
  schema: ToolSchema | undefined,
  emit: ApprovalEmit,
  run_id: string,
  admitted: ApprovalRecord | undefined,
  waiting: { wait: ApprovalWait; place: WaitPlace },
): Promise<ApprovalDecision> {
  const again = () => gate.evaluate(subject, schema, { run_id, spend: true, ...(admitted !== undefined ? { admitted } : {}) });
  const first = await again();
  if (first.decision === "needs_approval") {
    return waitForDecision(subject, first, again, emit, waiting.place, waiting.wait, Date.now() + waiting.wait.timeoutMs, {});
  }
  emit(EVENT_KINDS.approvalDecided, subject.id, decidedData(first, {}));
  return first;
}

/** An `approval_decided` event's data for a decision nobody waited on: the verdict, the tiers, and who recorded it. */
export function decidedData(d: ApprovalDecision, context: JsonObject): JsonObject {
  const data: JsonObject = { decision: d.decision, required: d.required, granted: d.granted, fingerprint: d.fingerprint, ...context };
  if (d.reason !== undefined) data["reason"] = d.reason;
  if (d.record !== undefined) data["reviewer"] = d.record.reviewer;
  return data;
}
