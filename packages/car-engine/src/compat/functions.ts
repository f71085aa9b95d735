/**
 * The original binding's standalone functions, JSON strings in and out:
 * `executeProposal`, the static checks, and the multi-agent patterns driven
 * by the runner set with `registerAgentRunner`.
 */
import { CarError, hasKey, isJsonObject, parseProposal, type AgentSpec, type JsonObject, type JsonValue, type ToolSchema } from "@car/ir";
import { classifyProposal } from "@car/policy";
import {
  equivalent as equivalentOf,
  monteCarlo,
  type MonteCarloConfig,
  optimize as optimizeOf,
  simulate as simulateOf,
  verify as verifyOf,
  type VerifyOptions,
} from "@car/verify";
import { runMapReduce as mapReduce } from "../multi/map-reduce.ts";
import { runPipeline as pipeline } from "../multi/pipeline.ts";
import { runSupervisor as supervisor } from "../multi/supervisor.ts";
import { runSwarm as swarm, type SwarmMode } from "../multi/swarm.ts";
import type { AgentFn, MultiOptions } from "../multi/types.ts";
import type { BudgetLimits } from "../multi/budget.ts";
import { runVote as vote } from "../multi/vote.ts";
import { rankProposals as rank } from "../planner/rank.ts";
import { runTournament as tournament } from "../multi/tournament.ts";
import { runSubtask as subtask } from "../multi/subtask.ts";
import { CarRuntime } from "./car-runtime.ts";
import { jsonArg, jsonResult, optionalNumberArg, optionalObjectArg, optionalStringArg, proposalArg, stringArg, stringListArg } from "./json-args.ts";
import { currentAgentRunner, type JsonCallback, reportingCancellation } from "./tool-handler.ts";

/** Runs `proposalJson` on `rt`, dispatching every tool without a handler of its own to `toolFn`. */
export async function executeProposal(
  rt: CarRuntime,
  proposalJson: string,
  toolFn: JsonCallback,
  sessionId?: string | null,
  scopeJson?: string | null,
): Promise<string> {
  if (!(rt instanceof CarRuntime)) throw new CarError("invalid_params", "executeProposal's first argument must be a CarRuntime from @car/engine/compat");
  if (typeof toolFn !== "function") throw new CarError("invalid_params", "executeProposal takes a tool callback (callJson) => Promise<string>");
  if (scopeJson !== undefined && scopeJson !== null) throw new CarError("invalid_params", "per-call policy scopes (scopeJson) are not offered");
  const session = optionalStringArg(sessionId, "sessionId");
  const result = await rt.runtime.executeProposal(proposalArg(proposalJson, "proposalJson"), reportingCancellation(toolFn), { session_id: session });
  return jsonResult(result);
}

export function verify(
  proposalJson: string,
  initialStateJson?: string | null,
  toolNames?: string[] | null,
  maxActions?: number | null,
  toolSchemasJson?: string | null,
): string {
  const options: VerifyOptions = {};
  if (initialStateJson !== undefined && initialStateJson !== null) options.state = jsonArg(initialStateJson, "initialStateJson") as JsonObject;
  const names = toolNames === undefined || toolNames === null ? null : stringListArg(toolNames, "toolNames");
  const tools: (string | ToolSchema)[] = [...(names ?? [])];
  if (toolSchemasJson !== undefined && toolSchemasJson !== null) {
    const schemas = jsonArg(toolSchemasJson, "toolSchemasJson");
    if (!Array.isArray(schemas)) throw new CarError("invalid_params", "toolSchemasJson must be a JSON array of tool schemas");
    tools.push(...(schemas as ToolSchema[]));
  }
  if (names !== null || tools.length > 0) options.tools = tools;
  const max = optionalNumberArg(maxActions, "maxActions", (n) => Number.isSafeInteger(n) && n > 0, "a positive integer");
  if (max !== null) options.maxActions = max;
  return jsonResult(verifyOf(proposalArg(proposalJson, "proposalJson"), options));
}

export function simulate(proposalJson: string, initialStateJson?: string | null): string {
  const state = initialStateJson === undefined || initialStateJson === null ? undefined : (jsonArg(initialStateJson, "initialStateJson") as JsonObject);
  return jsonResult(simulateOf(proposalArg(proposalJson, "proposalJson"), state));
}

/**
 * `@car/verify`'s `monteCarlo` (the function behind `verify.monte_carlo`) in
 * the original's call form. A standalone function has no event log, so a
 * tool's rate is the caller's or `config.default_success_rate`; the answer
 * says so in `rate_provenance`. `configJson` keys are snake_case, as there.
 */
export function simulateMonteCarlo(
  proposalJson: string,
  initialStateJson?: string | null,
  toolSuccessRatesJson?: string | null,
  goalJson?: string | null,
  configJson?: string | null,
): string {
  const state = optionalObjectArg(initialStateJson, "initialStateJson");
  const rates = optionalObjectArg(toolSuccessRatesJson, "toolSuccessRatesJson");
  const goal = goalJson === undefined || goalJson === null ? null : jsonArg(goalJson, "goalJson");
  const config = optionalObjectArg(configJson, "configJson");
  const result = monteCarlo(proposalArg(proposalJson, "proposalJson"), {
    ...(state === undefined ? {} : { state }),
    ...(rates === undefined ? {} : { toolSuccessRates: rates as Record<string, number> }),
    ...(goal === null ? {} : { goal: goal as JsonValue }),
    ...(config === undefined ? {} : { config: config as MonteCarloConfig }),
  });
  return jsonResult(result);
}

export function optimize(proposalJson: string): string {
  return jsonResult(optimizeOf(proposalArg(proposalJson, "proposalJson")));
}

export function equivalent(proposal1Json: string, proposal2Json: string): boolean {
  return equivalentOf(jsonArg(proposal1Json, "proposal1Json"), jsonArg(proposal2Json, "proposal2Json"));
}

/**
 * Ranks candidate proposals, best first, by the planner's score:
 * `[{ index, proposal, score }]`, an unparsable candidate last as
 * `{ index, error }`. `tools` are the tool names verify checks against;
 * `costWeight` (0..1) weighs cost efficiency against success likelihood.
 */
export function rankProposals(candidatesJson: string, tools?: string[] | null, costWeight?: number | null): string {
  const candidates = jsonArg(candidatesJson, "candidatesJson");
  if (!Array.isArray(candidates)) throw new CarError("invalid_params", "candidatesJson must be a JSON array of proposals");
  const options: Parameters<typeof rank>[1] = {};
  if (tools !== undefined && tools !== null) options.verifyOptions = { tools: stringListArg(tools, "tools") };
  const weight = optionalNumberArg(costWeight, "costWeight", (n) => n >= 0 && n <= 1, "a number from 0 to 1");
  if (weight !== null) options.target = { cost_weight: weight };
  // As JSON: the proposal itself (not its graph), and an unparsable candidate's error as `{ code, message }`.
  const ranked = rank(candidates, options).map(({ index, proposal, score, error }) =>
    error === undefined ? { index, proposal: proposal?.proposal, score } : { index, error: { code: error.code, message: error.message } },
  );
  return jsonResult(ranked);
}

/** Each action's `{ action_id, tool, required_tier, reversibility, missing_compensation }`, as a JSON array. */
export function permissionClassify(proposalJson: string): string {
  return jsonResult(classifyProposal(parseProposal(proposalArg(proposalJson, "proposalJson"))).classifications);
}

// --- multi-agent ------------------------------------------------------------

/**
 * The registered runner as an `AgentFn`: the spec goes out as JSON text, the
 * answer comes back as JSON text. The original read `error` as an optional
 * field (absent = no error), and runners written for it leave it out on
 * success; here an absent `error` is read as null. Everything else stays
 * strict (DECISIONS.md §5).
 */
function runnerAgent(): AgentFn {
  const runner = currentAgentRunner();
  return async (spec, task) => {
    const text = await runner(JSON.stringify(spec), task);
    let output: unknown;
    try {
      output = JSON.parse(text);
    } catch {
      return text; // not JSON: the strict parser reports it as this agent's error
    }
    return isJsonObject(output) && !hasKey(output, "error") ? JSON.stringify({ ...output, error: null }) : text;
  };
}

function budgetOptions(budgetSpec: string | null | undefined): MultiOptions {
  if (budgetSpec === undefined || budgetSpec === null) return {};
  return { budget: jsonArg(budgetSpec, "budgetSpec") as BudgetLimits };
}

function specOrNull(json: string | null | undefined, what: string): AgentSpec | null {
  return json === undefined || json === null ? null : (jsonArg(json, what) as AgentSpec);
}

export async function runPipeline(stages: string, task: string, budgetSpec?: string | null): Promise<string> {
  return jsonResult(await pipeline(jsonArg(stages, "stages") as AgentSpec[], stringArg(task, "task"), runnerAgent(), budgetOptions(budgetSpec)));
}

export async function runSwarm(mode: string, agents: string, task: string, synthesizerSpec?: string | null, budgetSpec?: string | null): Promise<string> {
  const options = { ...budgetOptions(budgetSpec), synthesizer: specOrNull(synthesizerSpec, "synthesizerSpec") };
  return jsonResult(
    await swarm(stringArg(mode, "mode") as SwarmMode, jsonArg(agents, "agents") as AgentSpec[], stringArg(task, "task"), runnerAgent(), options),
  );
}

export async function runSupervisor(workers: string, supervisorSpec: string, task: string, maxRounds: number, budgetSpec?: string | null): Promise<string> {
  const options = { ...budgetOptions(budgetSpec), max_rounds: maxRounds };
  return jsonResult(
    await supervisor(
      jsonArg(workers, "workers") as AgentSpec[],
      jsonArg(supervisorSpec, "supervisor") as AgentSpec,
      stringArg(task, "task"),
      runnerAgent(),
      options,
    ),
  );
}

export async function runMapReduce(mapper: string, reducer: string, task: string, items: string, budgetSpec?: string | null): Promise<string> {
  const result = await mapReduce(
    jsonArg(mapper, "mapper") as AgentSpec,
    jsonArg(reducer, "reducer") as AgentSpec,
    stringArg(task, "task"),
    jsonArg(items, "items") as string[],
    runnerAgent(),
    budgetOptions(budgetSpec),
  );
  return jsonResult(result);
}

export async function runVote(agents: string, task: string, synthesizerSpec?: string | null, budgetSpec?: string | null): Promise<string> {
  const options = { ...budgetOptions(budgetSpec), synthesizer: specOrNull(synthesizerSpec, "synthesizerSpec") };
  return jsonResult(await vote(jsonArg(agents, "agents") as AgentSpec[], stringArg(task, "task"), runnerAgent(), options));
}

/** Ranks `competitors` by a single-elimination bracket, a fresh `judge` call per match. */
export async function runTournament(competitors: string, judge: string, task: string, budgetSpec?: string | null): Promise<string> {
  return jsonResult(
    await tournament(
      jsonArg(competitors, "competitors") as AgentSpec[],
      jsonArg(judge, "judge") as AgentSpec,
      stringArg(task, "task"),
      runnerAgent(),
      budgetOptions(budgetSpec),
    ),
  );
}

/** Runs `mainAgent` with the `spawn_subtask` tool: sub-agents get a subset of its tools, checked before and at execution. */
export async function runSubtask(mainAgent: string, task: string, budgetSpec?: string | null): Promise<string> {
  return jsonResult(await subtask(jsonArg(mainAgent, "mainAgent") as AgentSpec, stringArg(task, "task"), runnerAgent(), budgetOptions(budgetSpec)));
}
