/**
 * The human half of the approval gate: `permission.evaluate` (what the gate
 * would decide for each action, asking nobody), `permission.approve` /
 * `permission.reject` (a durable decision on the ledger, keyed by the
 * operation's fingerprint, that answers later evaluations on every session
 * and survives restarts) and the session's standing tier
 * (`permission.get_tier` / `set_tier`). The reviewer is stamped from the
 * connection, never taken from the caller.
 */
import { type Action, CarError, getOwn, type JsonValue, parseAction } from "@car/ir";
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
import { invalidParams, optionalNumber, optionalObject, optionalString, paramsObject, requireString } from "../params.ts";
import type { Session } from "../session.ts";
import { skillCeilingOf } from "../skill-library.ts";
import { proposalParam } from "./static-analysis.ts";

function schemaOf(session: Session, action: Action) {
  return action.tool === undefined ? undefined : session.runtime.listTools().find((t) => t.name === action.tool);
}

async function evaluate(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = paramsObject(params);
  const proposal = proposalParam(p);
  const skill = optionalString(p, "skill");
  const ceiling = skill === undefined ? undefined : skillCeilingOf(ctx.session, ctx.tenant.id, skill);
  // The skill's ceiling caps the standing tier for this evaluation: the same gate and ledger, judged at min(granted, ceiling).
  const gate = ceiling === undefined ? ctx.session.gate : ctx.session.gate.capped(ceiling);
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
  return { decisions, ...(ceiling === undefined ? {} : { skill_ceiling: ceiling }) };
}

/**
 * The approval work-queue. With a `proposal`: only the `needs_approval`
 * rows of `permission.evaluate`, same shape. Without one: every proposal
 * waiting for an approval (`wait_for_approval_ms`) on this server, or with
 * `--db postgres://…` on every server on the database, oldest first —
 * fingerprint, required and granted tier, tool, parameter keys and who
 * asked (an agent's connection sees only its own).
 */
async function pending(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  if (paramsObject(params)["proposal"] === undefined) {
    if (optionalString(paramsObject(params), "skill") !== undefined) throw invalidParams("skill caps the evaluation of a proposal: pass the proposal too");
    const waits = await ctx.session.options.oversight.waitingApprovals();
    // An agent sees only its own waits; the operator sees every one.
    const mine = ctx.role === "operator" ? waits : waits.filter((w) => w.asked_by === ctx.session.principal);
    return { pending: mine as unknown as JsonValue };
  }
  const { decisions, skill_ceiling } = (await evaluate(params, ctx)) as { decisions: { decision: string }[]; skill_ceiling?: string };
  return { pending: decisions.filter((d) => d.decision === "needs_approval"), ...(skill_ceiling === undefined ? {} : { skill_ceiling }) };
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

/** Most bytes of `evidence` one decision keeps (it is stored with the decision in the shared ledger). */
const MAX_EVIDENCE_BYTES = 64 * 1024;

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
    const evidence = getOwn(p, "evidence");
    if (evidence !== undefined && Buffer.byteLength(JSON.stringify(evidence), "utf8") > MAX_EVIDENCE_BYTES) {
      throw invalidParams(`evidence is larger than ${MAX_EVIDENCE_BYTES} bytes; store it elsewhere and pass a reference`);
    }
    const now = Date.now();
    const ttl = optionalNumber(p, "ttl_secs");
    if (ttl !== undefined && (!Number.isSafeInteger(ttl) || ttl < 1)) throw invalidParams(`ttl_secs must be a positive integer, got ${ttl}`);
    const record: ApprovalRecord = {
      ...subject,
      decision,
      reviewer: session.principal,
      decided_at: now,
      expires_at: ttl === undefined ? null : now + ttl * 1000,
      session_id: session.id,
      ...(reason !== undefined ? { reason } : {}),
      ...(evidence !== undefined && evidence !== null ? { evidence } : {}),
      ...approvalScope(p),
    };
    await session.runtime.approvals.record(record);
    // A proposal waiting on this operation reads the ledger again now.
    session.options.oversight.approvals.nudge(record.fingerprint);
    return record as unknown as JsonValue;
  };
}

/**
 * The decision's scope (DECISIONS §22): `run_id`, `agent_id` and `uses`
 * (`ttl_secs` sets `expires_at`). None of them: the decision covers its
 * operation for every run of every agent until revoked or superseded.
 */
function approvalScope(p: Record<string, JsonValue>): Pick<ApprovalRecord, "run_id" | "agent_id" | "uses"> {
  const scope: Pick<ApprovalRecord, "run_id" | "agent_id" | "uses"> = {};
  const run_id = optionalString(p, "run_id");
  const agent_id = optionalString(p, "agent_id");
  const uses = optionalNumber(p, "uses");
  if (run_id !== undefined) scope.run_id = run_id;
  if (agent_id !== undefined) scope.agent_id = agent_id;
  if (uses !== undefined) {
    if (!Number.isSafeInteger(uses) || uses < 1) throw invalidParams(`uses must be a positive integer, got ${uses}`);
    scope.uses = uses;
  }
  return scope;
}

function getTier(_params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  return { granted_tier: ctx.session.gate.grantedTier };
}

function setTier(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const tier = readTier(requireString(paramsObject(params), "tier"), "tier");
  return { granted_tier: moveTier(ctx, tier, "permission.set_tier") };
}

export const approvalMethods: MethodTable = {
  // `tenant_id` names whose skills `skill` is looked up in (skill-library.ts); the evaluation reads no state.
  "permission.evaluate": agentMethod(evaluate, { tenancy: "tenant_id" }),
  "permission.pending": agentMethod(pending, { tenancy: "tenant_id" }),
  "permission.approve": operatorMethod(decide("approved")),
  "permission.reject": operatorMethod(decide("rejected")),
  "permission.get_tier": agentMethod(getTier),
  "permission.set_tier": agentMethod(setTier),
};
