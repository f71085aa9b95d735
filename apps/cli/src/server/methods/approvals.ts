/**
 * The human half of the approval gate: `permission.evaluate` (what the gate
 * would decide for each action, asking nobody), `permission.approve` /
 * `permission.reject` (a durable decision on the ledger, keyed by the
 * operation's fingerprint, that answers later evaluations on every session
 * and survives restarts) and the session's standing tier
 * (`permission.get_tier` / `set_tier`). The reviewer is stamped from the
 * connection, never taken from the caller.
 */
import { type Action, type JsonValue, parseAction } from "@car/ir";
import {
  type ApprovalOutcome,
  ApprovalGate,
  type ApprovalRecord,
  classifyAction,
  isPermissionTier,
  operationFingerprint,
  type PermissionTier,
  PERMISSION_TIERS,
  tierRank,
} from "@car/policy";
import type { MethodContext, MethodTable } from "../method.ts";
import { requireOperator } from "../operator.ts";
import { invalidParams, optionalObject, optionalString, paramsObject, requireString } from "../params.ts";
import type { Session } from "../session.ts";
import { proposalParam } from "./static-analysis.ts";

/** The session's gate; an ungoverned session (no agent) is evaluated by a posture-less gate on the same ledger. */
function gateOf(session: Session): ApprovalGate {
  return session.gate ?? new ApprovalGate({ ledger: session.runtime.approvals, sessionId: session.id });
}

function schemaOf(session: Session, action: Action) {
  return action.tool === undefined ? undefined : session.runtime.listTools().find((t) => t.name === action.tool);
}

async function evaluate(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const proposal = proposalParam(paramsObject(params));
  const gate = gateOf(ctx.session);
  const decisions: JsonValue[] = [];
  for (const action of proposal.actions) {
    const schema = schemaOf(ctx.session, action);
    const d = await gate.evaluate(action, schema);
    decisions.push({
      action_id: d.action_id,
      fingerprint: d.fingerprint,
      decision: d.decision,
      required: d.required,
      reversibility: classifyAction(action, schema).reversibility,
      granted: d.granted,
      ...(d.reason !== undefined ? { reason: d.reason } : {}),
    });
  }
  return { decisions };
}

/** The approval work-queue: only the `needs_approval` rows of `permission.evaluate`, same shape. */
async function pending(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const { decisions } = (await evaluate(params, ctx)) as { decisions: { decision: string }[] };
  return { pending: decisions.filter((d) => d.decision === "needs_approval") };
}

function readTier(value: string, field: string): PermissionTier {
  if (!isPermissionTier(value)) throw invalidParams(`${field} must be one of ${PERMISSION_TIERS.join(", ")}, got '${value}'`);
  return value;
}

/** `{ fingerprint, required_tier }` or `{ action }` (fingerprinted and classified here). */
function decide(decision: ApprovalOutcome) {
  return async (params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> => {
    const p = paramsObject(params);
    requireOperator(ctx, decision === "approved" ? "permission.approve" : "permission.reject");
    const session = ctx.session;
    const actionParam = optionalObject(p, "action");
    let subject: Pick<ApprovalRecord, "fingerprint" | "required_tier" | "action_id" | "tool">;
    if (actionParam !== undefined) {
      const action = parseAction(actionParam);
      subject = {
        fingerprint: operationFingerprint(action),
        required_tier: classifyAction(action, schemaOf(session, action)).tier,
        action_id: action.id,
        ...(action.tool !== undefined ? { tool: action.tool } : {}),
      };
    } else {
      subject = { fingerprint: requireString(p, "fingerprint"), required_tier: readTier(requireString(p, "required_tier"), "required_tier") };
    }
    const reason = optionalString(p, "reason");
    const record: ApprovalRecord = {
      ...subject,
      decision,
      reviewer: session.options.agentId !== undefined ? `agent:${session.options.agentId}` : `conn:${session.id}`,
      decided_at: Date.now(),
      expires_at: null,
      session_id: session.id,
      ...(reason !== undefined ? { reason } : {}),
    };
    await session.runtime.approvals.record(record);
    return record as unknown as JsonValue;
  };
}

function getTier(_params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  return { granted_tier: gateOf(ctx.session).grantedTier };
}

/** Only a governed (agent) session has a standing tier to move; the others are not gated at all. */
function setTier(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const tier = readTier(requireString(paramsObject(params), "tier"), "tier");
  const gate = ctx.session.gate;
  if (gate === undefined) throw invalidParams("permission.set_tier: this connection acts for no agent (connect with ?agent_id=) and is not gated");
  // An agent may narrow its own standing tier, never widen it.
  if (tierRank(tier) > tierRank(gate.grantedTier)) requireOperator(ctx, "permission.set_tier (raising the tier)");
  return { granted_tier: gate.setTier(tier) };
}

export const approvalMethods: MethodTable = {
  "permission.evaluate": evaluate,
  "permission.pending": pending,
  "permission.approve": decide("approved"),
  "permission.reject": decide("rejected"),
  "permission.get_tier": getTier,
  "permission.set_tier": setTier,
};
