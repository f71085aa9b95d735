/**
 * `proposal.submit`: executes a proposal on the session's runtime. Each
 * `tool_call` becomes a `tools.execute` request to this client; the answer
 * is the seeds' `ProposalResult` (DECISIONS.md §10). If the connection
 * closes or the server shuts down mid-run, the proposal is aborted and rolled
 * back, and its result reports the actions that never finished. With
 * `rollback: "compensate"` an aborted proposal's compensations run (through
 * this client's `tools.execute`, like any call) before the answer. With
 * `wait_for_approval_ms` a proposal that needs approvals waits for them
 * (listed by `permission.pending`, released by `permission.approve` /
 * `reject`) instead of being rejected; nothing runs before the decision.
 */
import { CarError, isJsonObject, type JsonObject, type JsonValue, parseProposalWithGraph, serializeProposalResult } from "@car/ir";
import { type MethodContext, type MethodTable, agentMethod } from "../method.ts";
import { invalidParams, optionalBoolean, optionalNumber, optionalString, paramsObject, requireValue } from "../params.ts";
import { PolicySessions } from "../policy-sessions.ts";
import { skillCeilingOf } from "../skill-library.ts";
import { scopedProposalInput, scopeTenant, withinTenant } from "../tenancy.ts";
import { applyRetention } from "./audit.ts";
import { recordProposalTurns } from "../runs/proposal-turns.ts";

/**
 * `scope` is a `RuntimeScope` `{ callerId?, tenantId?, claims? }`: with a
 * `tenantId` the proposal's state keys live in that tenant's namespace, as
 * `state.*` with its `tenant_id` sees them (tenancy.ts). `callerId` and
 * `claims` attach identity the server has no use for yet, so they are refused
 * rather than accepted and ignored (DECISIONS §25).
 */
function runtimeScopeTenant(p: JsonObject): string | undefined {
  const scope = p["scope"];
  if (scope === undefined || scope === null) return undefined;
  if (!isJsonObject(scope)) throw invalidParams("scope must be a RuntimeScope object { tenantId? }");
  const unknown = Object.keys(scope).find((k) => k !== "tenantId" && k !== "tenant_id");
  if (unknown !== undefined) throw invalidParams(`scope.${unknown.slice(0, 64)} is not enforced by this server; only scope.tenantId is`);
  const tenant = scope["tenantId"] ?? scope["tenant_id"];
  if (tenant === undefined || tenant === null) return undefined;
  if (typeof tenant !== "string") throw invalidParams("scope.tenantId must be a string");
  return scopeTenant(tenant);
}

/** The longest an approval wait may be asked for: a day (DECISIONS §25: a bound, not an open door). */
const MAX_APPROVAL_WAIT_MS = 86_400_000;

/** `wait_for_approval_ms`: wait that long for the approvals the proposal needs instead of being rejected (reference `permission.*`). */
function waitForApprovalMs(p: Record<string, JsonValue>): number | undefined {
  const ms = optionalNumber(p, "wait_for_approval_ms");
  if (ms === undefined) return undefined;
  if (!Number.isSafeInteger(ms) || ms < 1 || ms > MAX_APPROVAL_WAIT_MS) {
    throw invalidParams(`wait_for_approval_ms must be an integer from 1 to ${MAX_APPROVAL_WAIT_MS}, got ${ms}`);
  }
  return ms;
}

async function submit(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = paramsObject(params);
  const proposal = requireValue(p, "proposal");
  // A policy session of this connection layers its rules on the global ones for this run (policy-sessions.ts).
  const policySession = optionalString(p, "session_id");
  if (policySession !== undefined) ctx.session.policySessions.check(policySession);
  const tenant = runtimeScopeTenant(p);
  const rollback = p["rollback"] ?? "state";
  if (rollback !== "state" && rollback !== "compensate") throw invalidParams('rollback must be "state" or "compensate"');
  const session = ctx.session;
  const waitMs = waitForApprovalMs(p);
  // Parsed once: the runtime takes the pair as it is. Its admission guard (admission.ts) holds the server's rules.
  // `strict`: a field the spec does not name is an invalid_proposal error, not a field kept for the round trip.
  const strict = optionalBoolean(p, "strict") === true;
  // `skill`: the skill that drove these actions; its deployment_tier caps the standing tier at admission and dispatch.
  const skill = optionalString(p, "skill");
  const tierCeiling = skill === undefined ? undefined : skillCeilingOf(session, tenant, skill);
  const parsed = parseProposalWithGraph(tenant === undefined ? proposal : scopedProposalInput(proposal, tenant), { strict });
  const { result, report } = await withinTenant(tenant, () =>
    PolicySessions.within(policySession, () =>
      session.runtime.executeProposalWithReport(parsed, undefined, {
        toolCaller: session.toolCaller,
        session_id: session.id,
        signal: ctx.signal,
        rollback,
        ...(tierCeiling !== undefined ? { tierCeiling } : {}),
        ...(waitMs !== undefined ? { approvalWait: { waits: session.options.oversight.approvals, timeoutMs: waitMs, asked_by: session.principal } } : {}),
      }),
    ),
  );
  // The run this connection started (runs.start) records the proposal's tool calls as its turns.
  await recordProposalTurns(session, parsed.proposal, result);
  // An installed `events.retention` bound holds after every append, as the reference describes.
  await applyRetention(ctx.session.options.store);
  const serialized = serializeProposalResult(result);
  // A commit the store refused is an error (the code says which conflict), with the rolled-back result beside it.
  const refusal = report.refusal;
  if (refusal !== undefined) throw new CarError(refusal.code, refusal.message, { keys: refusal.keys, result: serialized });
  return serialized;
}

export const proposalMethods: MethodTable = { "proposal.submit": agentMethod(submit, { tenancy: "proposal", resources: ["proposal"] }) };
