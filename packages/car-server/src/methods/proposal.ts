/**
 * `proposal.submit`: executes a proposal on the session's runtime. Each
 * `tool_call` becomes a `tools.execute` request to this client; the answer
 * is the seeds' `ProposalResult` (DECISIONS.md §10). If the connection
 * closes or the server shuts down mid-run, the proposal is aborted and rolled
 * back, and its result reports the actions that never finished. With
 * `rollback: "compensate"` an aborted proposal's compensations run (through
 * this client's `tools.execute`, like any call) before the answer.
 */
import { type JsonValue, parseProposalWithGraph, serializeProposalResult } from "@car/ir";
import { type MethodContext, type MethodTable, agentMethod } from "../method.ts";
import { invalidParams, paramsObject, requireValue } from "../params.ts";
import { applyRetention } from "./audit.ts";
import { commitRefusalOf, refusalError } from "../commit-refusal.ts";
import { recordProposalTurns } from "../runs/proposal-turns.ts";

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
  const parsed = parseProposalWithGraph(proposal);
  const result = await session.runtime.executeProposal(parsed, undefined, {
    toolCaller: session.toolCaller,
    session_id: session.id,
    signal: ctx.signal,
    rollback,
  });
  // The run this connection started (runs.start) records the proposal's tool calls as its turns.
  await recordProposalTurns(session, parsed.proposal, result);
  // An installed `events.retention` bound holds after every append, as the reference describes.
  await applyRetention(ctx.session.options.store);
  const serialized = serializeProposalResult(result);
  // A commit the store refused is an error (the code says which conflict), with the rolled-back result beside it.
  const refusal = await commitRefusalOf(session.runtime.events, parsed.proposal.id);
  if (refusal !== undefined) throw refusalError(refusal, { result: serialized });
  return serialized;
}

export const proposalMethods: MethodTable = { "proposal.submit": agentMethod(submit, { tenancy: "proposal", resources: ["proposal"] }) };
