/**
 * The one gate every call passes at dispatch, forward action or
 * compensation step alike: the policies, then the approval gate on the form
 * the call is made in (when it is new to the gate: resolved `$id.output`
 * references, or an undo), then the trace rules — judged against what ran
 * so far and recorded as dispatched in the same synchronous step. Each
 * refusal is on the record (`policy_violation`, `approval_requested` /
 * `approval_decided`) and comes back as the stage and its one message
 * (`refusals.ts`). Nothing dispatches without passing here.
 *
 * Synchronous unless the approval gate is asked, so a forward action that
 * needs no approval costs no promise.
 */
import type { Action, JsonObject, PolicyViolation, ToolSchema } from "@car/ir";
import type { ApprovalDecision, ApprovalGate, ApprovalRecord, PolicyEngine, PolicyState, TraceGate } from "@car/policy";
import { EVENT_KINDS } from "../events/event-kinds.ts";
import { admitToTrace, traceApproval } from "../trace/trace-steps.ts";
import { type ApprovalEmit, decideOnRecord } from "./approval-on-record.ts";
import { type ApprovalWait, decideWaiting, type WaitPlace } from "./approval-wait.ts";
import { deniedByApprovalGate, deniedByPolicy } from "./refusals.ts";

/** The rules a runtime holds calls to. */
export interface GateRules {
  readonly policies: PolicyEngine;
  /** The tier / approval gate, when configured. */
  readonly approvalGate: ApprovalGate | undefined;
  /** Temporal rules, judged last. */
  readonly traceGate: TraceGate;
}

/** One call at the gate. */
export interface GatedCall {
  /** The call in the form it will be made in (references resolved). */
  readonly action: Action;
  /** The action id its events are recorded under (a compensation step's: the compensated action's). */
  readonly recordAs: string;
  /** The run whose trace the call joins (DECISIONS §20). */
  readonly run_id: string;
  /** The state the policies see. */
  readonly state: PolicyState;
  /**
   * Put the call to the approval gate (a form admission did not judge: a
   * resolved one, or a compensation step); absent, the gate is not asked.
   * `admitted`: the approval that admitted the declared form.
   */
  readonly approval?:
    | {
        readonly schema: ToolSchema | undefined;
        readonly admitted?: ApprovalRecord | undefined;
        /** The run waits for approvals: a form that needs one waits for it here instead of being refused. */
        readonly waiting?: { wait: ApprovalWait; place: WaitPlace } | undefined;
      }
    | undefined;
  /** Fields every event of this call's gate carries (`compensation: true`). */
  readonly context?: JsonObject;
  /** Whether the call is still wanted after a wait for an approver (an abort meanwhile withdraws it). */
  readonly wanted?: () => boolean;
}

/** Why the gate refused a call: the stage (as `action_rejected` names it) and the one message for it. */
export type GateRefusal =
  | { readonly stage: "policy"; readonly message: string }
  | { readonly stage: "approval"; readonly message: string; readonly decision: ApprovalDecision };

/** `undefined`: passed, and recorded as dispatched. `"withdrawn"`: no longer wanted after the approval wait. */
export type GateVerdict = undefined | GateRefusal | "withdrawn";

const NO_CONTEXT: JsonObject = Object.freeze({}) as JsonObject;

export function gateCall(rules: GateRules, call: GatedCall, emit: ApprovalEmit): GateVerdict | Promise<GateVerdict> {
  const { action } = call;
  if (rules.policies.size > 0) {
    const violations = rules.policies.check(action, call.state);
    if (violations.length > 0) return refusedByPolicy(call, violations, emit);
  }
  const gate = rules.approvalGate;
  if (gate === undefined || call.approval === undefined) return traced(rules, call, emit);
  return approved(rules, gate, call, call.approval, emit);
}

async function approved(
  rules: GateRules,
  gate: ApprovalGate,
  call: GatedCall,
  approval: NonNullable<GatedCall["approval"]>,
  emit: ApprovalEmit,
): Promise<GateVerdict> {
  const { action } = call;
  const recorded: ApprovalEmit = (kind, _id, data) => emit(kind, call.recordAs, data);
  // Without an approver to ask, a run that waits for approvals waits here too (DECISIONS §22), listed like an admission wait.
  const decision: ApprovalDecision =
    approval.waiting !== undefined && !gate.canAsk
      ? await decideWaiting(gate, action, approval.schema, recorded, call.run_id, approval.admitted, approval.waiting)
      : await decideOnRecord(gate, action, approval.schema, recorded, {
          ask: true,
          everyDecision: true,
          context: call.context ?? NO_CONTEXT,
          admitted: approval.admitted,
          run_id: call.run_id,
        });
  if (decision.decision !== "allow") return { stage: "approval", message: deniedByApprovalGate(decision), decision };
  if (action.tool !== undefined) traceApproval(rules.traceGate, call.run_id, action.tool, decision);
  if (call.wanted !== undefined && !call.wanted()) return "withdrawn";
  return traced(rules, call, emit);
}

/** The trace rules, last: a tool call that passes is recorded as dispatched in the same step. */
function traced(rules: GateRules, call: GatedCall, emit: ApprovalEmit): GateVerdict {
  if (call.action.type !== "tool_call") return undefined;
  const violations = admitToTrace(rules.traceGate, call.run_id, call.action);
  return violations.length === 0 ? undefined : refusedByPolicy(call, violations, emit);
}

function refusedByPolicy(call: GatedCall, violations: readonly PolicyViolation[], emit: ApprovalEmit): GateRefusal {
  for (const v of violations) {
    const data: JsonObject =
      call.context === undefined ? { policy_name: v.policy_name, reason: v.reason } : { policy_name: v.policy_name, reason: v.reason, ...call.context };
    emit(EVENT_KINDS.policyViolation, call.recordAs, data);
  }
  return { stage: "policy", message: deniedByPolicy(violations) };
}
