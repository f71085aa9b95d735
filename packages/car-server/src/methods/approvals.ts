/**
 * The human half of the approval gate: `permission.evaluate` (what the gate
 * would decide for each action, asking nobody), `permission.approve` /
 * `permission.reject` (a durable decision on the ledger, keyed by the
 * operation's fingerprint, that answers later evaluations on every session
 * and survives restarts) and the session's standing tier
 * (`permission.get_tier` / `set_tier`). The reviewer is stamped from the
 * connection, never taken from the caller.
 */
import { type Action, CarError, type JsonValue, parseAction } from "@car/ir";
import {
  type ApprovalOutcome,
  type ApprovalRecord,
  type ApprovalSubject,
  approvalSubject,
  classifyAction,
  isPermissionTier,
  type PermissionTier,
  PERMISSION_TIERS,
  tierRank,
} from "@car/policy";
import { type MethodContext, type MethodTable, agentMethod, operatorMethod } from "../method.ts";
import { requireOperator } from "../operator.ts";
import { invalidParams, optionalObject, optionalString, paramsObject, requireString } from "../params.ts";
import type { Session } from "../session.ts";
import { proposalParam } from "./static-analysis.ts";

function schemaOf(session: Session, action: Action) {
  return action.tool === undefined ? undefined : session.runtime.listTools().find((t) => t.name === action.tool);
}

async function evaluate(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const proposal = proposalParam(paramsObject(params));
  const gate = ctx.session.gate;
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

export function readTier(value: string, field: string): PermissionTier {
  if (!isPermissionTier(value)) throw invalidParams(`${field} must be one of ${PERMISSION_TIERS.join(", ")}, got '${value}'`);
  return value;
}

/**
 * Moves the session's standing tier (`permission.set_tier`, `session.init`'s
 * `tier`). Narrowing is anyone's; widening is an operator's (never an
 * agent's), and no connection goes above the server's standing tier
 * (`car serve --tier`): a client never grants itself a tier.
 */
export function moveTier(ctx: MethodContext, tier: PermissionTier, method: string): PermissionTier {
  const gate = ctx.session.gate;
  const ceiling = ctx.session.options.standingTier ?? "sandbox_edit";
  if (tierRank(tier) > tierRank(ceiling)) {
    throw new CarError("unauthorized", `${method}: ${tier} is above this server's standing tier ${ceiling} (set by the operator: car serve --tier)`);
  }
  if (tierRank(tier) > tierRank(gate.grantedTier)) requireOperator(ctx, `${method} (raising the tier)`);
  return gate.setTier(tier);
}

/** `{ fingerprint, required_tier }` or `{ action }` (fingerprinted and classified here). */
function decide(decision: ApprovalOutcome) {
  return async (params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> => {
    const p = paramsObject(params);
    const session = ctx.session;
    const actionParam = optionalObject(p, "action");
    let subject: ApprovalSubject;
    if (actionParam !== undefined) {
      const action = parseAction(actionParam);
      subject = approvalSubject(action, schemaOf(session, action));
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
  return { granted_tier: ctx.session.gate.grantedTier };
}

function setTier(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const tier = readTier(requireString(paramsObject(params), "tier"), "tier");
  return { granted_tier: moveTier(ctx, tier, "permission.set_tier") };
}

export const approvalMethods: MethodTable = {
  "permission.evaluate": agentMethod(evaluate),
  "permission.pending": agentMethod(pending),
  "permission.approve": operatorMethod(decide("approved")),
  "permission.reject": operatorMethod(decide("rejected")),
  "permission.get_tier": agentMethod(getTier),
  "permission.set_tier": agentMethod(setTier),
};
