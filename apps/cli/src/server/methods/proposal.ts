/**
 * `proposal.submit`: executes a proposal on the session's runtime. Each
 * `tool_call` becomes a `tools.execute` request to this client; the answer
 * is the seeds' `ProposalResult` (DECISIONS.md §10). If the connection
 * closes or the server shuts down mid-run, the proposal is aborted and rolled
 * back, and its result reports the actions that never finished. With
 * `rollback: "compensate"` an aborted proposal's compensations run (through
 * this client's `tools.execute`, like any call) before the answer.
 */
import { CarError, isJsonObject, type JsonValue, type ProposalResult, parseProposalWithGraph, serializeProposalResult } from "@car/ir";
import { TerminalToolError, type ToolCaller } from "@car/engine";
import type { MethodContext, MethodTable } from "../method.ts";
import { callClientTool } from "../client-tool.ts";
import { invalidParams, paramsObject, requireValue } from "../params.ts";
import type { Session } from "../session.ts";
import { checkProposalTenancy } from "../tenancy.ts";
import { applyRetention } from "./audit.ts";
import { commitRefusalOf, refusalError } from "../../commit-refusal.ts";

/** Refuses a proposal with more actions than the server takes, before parsing it. */
function checkActionCount(proposal: JsonValue, max: number): void {
  const actions = isJsonObject(proposal) ? proposal["actions"] : undefined;
  if (Array.isArray(actions) && actions.length > max) {
    throw new CarError("invalid_proposal", `the proposal has ${actions.length} actions; this server accepts at most ${max} per proposal (--max-actions)`, {
      actions: actions.length,
      limit: max,
    });
  }
}

/**
 * The session's dispatch, counting the bytes of tool output this proposal
 * receives, as the answers' frames measured on the socket (nothing is
 * serialised again to count): past the limit the call fails terminally, so
 * the proposal aborts and rolls back instead of the server holding ever
 * more output.
 */
function meteredCaller(session: Session): ToolCaller {
  const max = session.options.limits.maxOutputBytesPerProposal;
  let received = 0;
  const count = (bytes: number): void => {
    received += bytes;
  };
  return async (call, signal) => {
    const answer = await callClientTool(session, call, signal, count);
    if (received > max) {
      throw new TerminalToolError(`budget_exceeded: the proposal's tool outputs reached ${received} bytes, over the ${max}-byte limit (--max-output-bytes)`);
    }
    return answer;
  };
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
  checkActionCount(proposal, session.options.limits.maxActionsPerProposal);
  // Parsed once: the runtime takes the pair as it is.
  const parsed = parseProposalWithGraph(proposal);
  checkProposalTenancy(parsed.proposal);
  session.proposals.take();
  let result: ProposalResult;
  try {
    session.options.serverProposals.take();
    try {
      result = await session.runtime.executeProposal(parsed, undefined, {
        toolCaller: meteredCaller(session),
        session_id: session.id,
        signal: ctx.signal,
        rollback,
      });
    } finally {
      session.options.serverProposals.release();
    }
  } finally {
    session.proposals.release();
    session.persistAgent();
  }
  // An installed `events.retention` bound holds after every append, as the reference describes.
  await applyRetention(ctx.session.options.store);
  const serialized = serializeProposalResult(result);
  // A commit the store refused is an error (the code says which conflict), with the rolled-back result beside it.
  const refusal = await commitRefusalOf(session.runtime.events, parsed.proposal.id);
  if (refusal !== undefined) throw refusalError(refusal, { result: serialized });
  return serialized;
}

export const proposalMethods: MethodTable = { "proposal.submit": submit };
