/**
 * `verify`, `simulate`, `optimize`, `equivalent`: the stateless checks from
 * @car/verify. No tool runs. `verify` checks tool calls against the tools
 * registered on this connection (when it has any), so an unknown tool or a
 * parameter that breaks a tool's schema is reported before submitting.
 */
import { type ActionProposal, type JsonObject, type JsonValue, parseProposal, parseProposalWithGraph, serializeProposal } from "@car/ir";
import { equivalentDetailed, monteCarlo, optimize, simulateDetailed, type ToolRecord, verify } from "@car/verify";
import { EVENT_KINDS } from "@car/engine";
import { DEFAULT_HISTORY_WINDOW, toolHistory } from "@car/engine/planner";
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

/** How far back `verify.monte_carlo` reads the log for tool rates when the caller does not say (the reference's default). */
const DEFAULT_RATE_WINDOW_DAYS = 30;
const DAY_MS = 86_400_000;

/**
 * Each tool's dispatched calls and successes over the last `days` of the
 * session's log (the one log `events.query` reads), for the rates
 * `verify.monte_carlo` derives: dispatch-conditional, so rejected and
 * skipped actions do not count as failures twice.
 */
function observedRates(ctx: MethodContext, days: number): Map<string, ToolRecord> {
  const out = new Map<string, ToolRecord>();
  if (days === 0) return out;
  const runtime = ctx.session.runtime;
  const since = new Date(runtime.clock.now() - days * DAY_MS).toISOString();
  // The most recent outcomes in the window, bounded like the planner's history; oldest first for the start/outcome pairing.
  const kinds = [EVENT_KINDS.actionStarted, EVENT_KINDS.actionSucceeded, EVENT_KINDS.actionFailed];
  const events = runtime.events.query({ kinds, since, order: "desc", limit: DEFAULT_HISTORY_WINDOW }).reverse();
  for (const [tool, stats] of toolHistory(events)) out.set(tool, { succeeded: stats.succeeded, dispatched: stats.succeeded + stats.failed });
  return out;
}

/** `verify.monte_carlo`: static like `verify`; the rates default to what this session's log saw each tool do. */
function monteCarloMethod(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const p = paramsObject(params);
  const proposal = parseProposalWithGraph(requireValue(p, "proposal"));
  const days = optionalNumber(p, "rate_window_days") ?? DEFAULT_RATE_WINDOW_DAYS;
  const rates = optionalObject(p, "tool_success_rates");
  const config = optionalObject(p, "config");
  const state = optionalObject(p, "initial_state");
  const goal = p["goal"];
  const result = monteCarlo(proposal, {
    history: observedRates(ctx, days),
    windowDays: days,
    ...(state === undefined ? {} : { state }),
    ...(rates === undefined ? {} : { toolSuccessRates: rates as Record<string, number> }),
    ...(goal === undefined || goal === null ? {} : { goal }),
    ...(config === undefined ? {} : { config }),
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
  "verify.monte_carlo": agentMethod(monteCarloMethod),
  simulate: agentMethod(simulateMethod),
  optimize: agentMethod(optimizeMethod),
  equivalent: agentMethod(equivalentMethod),
};
