/**
 * `verify`, `simulate`, `optimize`, `equivalent`: the stateless checks from
 * @car/verify. No tool runs. `verify` checks tool calls against the tools
 * registered on this connection (when it has any), so an unknown tool or a
 * parameter that breaks a tool's schema is reported before submitting.
 */
import { type ActionProposal, type JsonObject, type JsonValue, parseProposal, parseProposalWithGraph, serializeProposal } from "@car/ir";
import { equivalentDetailed, optimize, simulateDetailed, verify } from "@car/verify";
import { agentMethod, type MethodContext, type MethodTable } from "../method.ts";
import { invalidParams, optionalArray, optionalBoolean, optionalNumber, optionalObject, paramsObject, requireValue } from "../params.ts";

/** Parses the proposal found under `key`; a malformed one is `invalid_proposal` (-32602) naming the problems. */
export function proposalParam(p: JsonObject, key = "proposal"): ActionProposal {
  return parseProposal(requireValue(p, key));
}

function initialState(p: JsonObject): JsonObject | undefined {
  return optionalObject(p, "initial_state") ?? optionalObject(p, "state");
}

function verifyMethod(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const p = paramsObject(params);
  // The pair keeps the graph parsing built, so verify does not build it again. `strict`: unknown fields
  // are an invalid_proposal error; otherwise they are warnings with a did-you-mean (DECISIONS §25).
  const strict = optionalBoolean(p, "strict") === true;
  const proposal = parseProposalWithGraph(requireValue(p, "proposal"), { strict });
  const tools = ctx.session.runtime.listTools();
  const state = initialState(p);
  const maxActions = optionalNumber(p, "max_actions");
  const result = verify(proposal, {
    ...(state === undefined ? {} : { state }),
    ...(tools.length === 0 ? {} : { tools }),
    ...(maxActions === undefined ? {} : { maxActions }),
    traceRules: ctx.session.runtime.traceGate.rules(),
  });
  return result as unknown as JsonValue;
}

function simulateMethod(params: JsonValue | undefined): JsonValue {
  const p = paramsObject(params);
  const outcome = simulateDetailed(proposalParam(p), initialState(p));
  return { state: outcome.state, skipped: outcome.skipped };
}

function optimizeMethod(params: JsonValue | undefined): JsonValue {
  return serializeProposal(optimize(proposalParam(paramsObject(params))));
}

function equivalentMethod(params: JsonValue | undefined): JsonValue {
  const p = paramsObject(params);
  const a = proposalParam(p, "proposal_a");
  const b = proposalParam(p, "proposal_b");
  const raw = optionalArray(p, "test_states");
  const states = raw?.map((s, i) => {
    if (s === null || typeof s !== "object" || Array.isArray(s)) throw invalidParams(`test_states[${i}] must be an object`);
    return s;
  });
  // An empty list is read as "not given" rather than a vacuous `true` over zero probes.
  const report = equivalentDetailed(a, b, states === undefined || states.length === 0 ? undefined : states);
  return report as unknown as JsonValue;
}

export const staticAnalysisMethods: MethodTable = {
  verify: agentMethod(verifyMethod),
  simulate: agentMethod(simulateMethod),
  optimize: agentMethod(optimizeMethod),
  equivalent: agentMethod(equivalentMethod),
};
