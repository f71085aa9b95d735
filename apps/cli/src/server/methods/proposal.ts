/**
 * `proposal.submit`: executes a proposal on the session's runtime. Each
 * `tool_call` becomes a `tools.execute` request to this client; the answer
 * is the seeds' `ProposalResult` (DECISIONS.md §10). If the connection
 * closes or the server shuts down mid-run, the proposal is aborted and rolled
 * back, and its result reports the actions that never finished.
 */
import { type JsonValue, serializeProposalResult } from "@car/ir";
import type { MethodContext, MethodTable } from "../method.ts";
import { invalidParams, paramsObject, requireValue } from "../params.ts";
import { applyRetention } from "./audit.ts";

async function submit(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = paramsObject(params);
  const proposal = requireValue(p, "proposal");
  if (p["session_id"] !== undefined && p["session_id"] !== null) {
    throw invalidParams("session_id: per-context policy sessions (session.policy.open) are not supported");
  }
  if (p["scope"] !== undefined && p["scope"] !== null) throw invalidParams("scope: tenant-scoped execution is not supported");
  const result = await ctx.session.runtime.executeProposal(proposal, undefined, {
    toolCaller: ctx.session.toolCaller,
    session_id: ctx.session.id,
    signal: ctx.signal,
  });
  // An installed `events.retention` bound holds after every append, as the reference describes.
  await applyRetention(ctx.session.options.store);
  return serializeProposalResult(result);
}

export const proposalMethods: MethodTable = { "proposal.submit": submit };
