/**
 * `proposal.submit`: executes a proposal on the session's runtime. Each
 * `tool_call` becomes a `tools.execute` request to this client; the answer
 * is the seeds' `ProposalResult` (DECISIONS.md §10). If the connection
 * closes or the server shuts down mid-run, the proposal is aborted and rolled
 * back, and its result reports the actions that never finished. With
 * `rollback: "compensate"` an aborted proposal's compensations run (through
 * this client's `tools.execute`, like any call) before the answer.
 */
import { CarError, type JsonValue, parseProposalWithGraph, serializeProposalResult } from "@car/ir";
import { type MethodContext, type MethodTable, agentMethod } from "../method.ts";
import { invalidParams, optionalBoolean, paramsObject, requireValue } from "../params.ts";
import { applyRetention } from "./audit.ts";

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
  // Parsed once: the runtime takes the pair as it is. Its admission guard (admission.ts) holds the server's rules.
  // `strict`: a field the spec does not name is an invalid_proposal error, not a field kept for the round trip.
  const parsed = parseProposalWithGraph(proposal, { strict: optionalBoolean(p, "strict") === true });
  const { result, report } = await session.runtime.executeProposalWithReport(parsed, undefined, {
    toolCaller: session.toolCaller,
    session_id: session.id,
    signal: ctx.signal,
    rollback,
  });
  // An installed `events.retention` bound holds after every append, as the reference describes.
  await applyRetention(ctx.session.options.store);
  const serialized = serializeProposalResult(result);
  // A commit the store refused is an error (the code says which conflict), with the rolled-back result beside it.
  const refusal = report.refusal;
  if (refusal !== undefined) throw new CarError(refusal.code, refusal.message, { keys: refusal.keys, result: serialized });
  return serialized;
}

export const proposalMethods: MethodTable = { "proposal.submit": agentMethod(submit, { tenancy: "proposal", resources: ["proposal"] }) };
