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
import { type JsonValue, parseProposalWithGraph, serializeProposalResult } from "@car/ir";
import { type MethodContext, type MethodTable, agentMethod } from "../method.ts";
import { invalidParams, optionalBoolean, optionalNumber, paramsObject, requireValue } from "../params.ts";
import { applyRetention } from "./audit.ts";
import { commitRefusalOf, refusalError } from "../commit-refusal.ts";

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
  if (p["session_id"] !== undefined && p["session_id"] !== null) {
    throw invalidParams("session_id: per-context policy sessions (session.policy.open) are not supported");
  }
  if (p["scope"] !== undefined && p["scope"] !== null) throw invalidParams("scope: tenant-scoped execution is not supported");
  const rollback = p["rollback"] ?? "state";
  if (rollback !== "state" && rollback !== "compensate") throw invalidParams('rollback must be "state" or "compensate"');
  const session = ctx.session;
  const waitMs = waitForApprovalMs(p);
  // Parsed once: the runtime takes the pair as it is. Its admission guard (admission.ts) holds the server's rules.
  // `strict`: a field the spec does not name is an invalid_proposal error, not a field kept for the round trip.
  const parsed = parseProposalWithGraph(proposal, { strict: optionalBoolean(p, "strict") === true });
  const result = await session.runtime.executeProposal(parsed, undefined, {
    toolCaller: session.toolCaller,
    session_id: session.id,
    signal: ctx.signal,
    rollback,
    ...(waitMs !== undefined ? { approvalWait: { waits: session.options.oversight.approvals, timeoutMs: waitMs, asked_by: session.principal } } : {}),
  });
  // An installed `events.retention` bound holds after every append, as the reference describes.
  await applyRetention(ctx.session.options.store);
  const serialized = serializeProposalResult(result);
  // A commit the store refused is an error (the code says which conflict), with the rolled-back result beside it.
  const refusal = await commitRefusalOf(session.runtime.events, parsed.proposal.id);
  if (refusal !== undefined) throw refusalError(refusal, { result: serialized });
  return serialized;
}

export const proposalMethods: MethodTable = { "proposal.submit": agentMethod(submit, { tenancy: "proposal", resources: ["proposal"] }) };
