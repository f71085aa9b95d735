/**
 * CostTarget scoring (agent-ir-spec.md §CostTarget):
 *
 *   score = success_likelihood × (1 − cost_weight) + cost_efficiency × cost_weight
 *
 * with both terms in [0, 1], defined here from what the runtime knows before
 * anything runs — verify's findings, the tools' history in the event log and
 * the target (docs/planner.md states the same rules):
 *
 * - success_likelihood is 0 for a proposal verify rejects. Otherwise it is the
 *   product, over tool calls, of the chance the call does not end the run: a
 *   tool's call succeeds with (s + 1) / (s + f + 1) after s successes and f
 *   failures in the log (an unseen tool is presumed to work; each failure
 *   pulls it down); `retry` gives it max_retries + 1 tries; a `skip` action's
 *   failure never ends the run. Each warning finding (a race, a precondition
 *   that may not hold) multiplies the product by 0.9.
 * - cost_efficiency is the mean, over tool calls, actions and duration, of
 *   min(1, target / estimate). Duration is the critical path through the DAG
 *   with each call costing its tool's mean duration in the log, or, for a
 *   tool with no timed history, the target's per-action share
 *   (target_duration_ms / target_actions).
 */
import { COST_TARGET_DEFAULTS, CarError, parseProposalWithGraph } from "@car/ir";
import type { Action, CostTarget, DependencyGraph, ParsedProposal, VerificationResult } from "@car/ir";
import { verify } from "@car/verify";
import type { VerifyOptions } from "@car/verify";
import type { ToolHistory } from "./tool-history.ts";

/** How much each warning finding lowers success_likelihood. */
export const WARNING_FACTOR = 0.9;

export interface ScoreOptions {
  /** Partial targets are completed with the seed's defaults. */
  target?: Partial<CostTarget>;
  /** Per-tool record from the event log (`toolHistory`); none means every tool is unseen. */
  history?: ToolHistory;
  /** Verify's verdict, when the caller already has it; otherwise verify runs with `verifyOptions`. */
  verification?: VerificationResult;
  verifyOptions?: VerifyOptions;
}

export interface CostEstimate {
  tool_calls: number;
  actions: number;
  duration_ms: number;
}

export interface ProposalScore {
  score: number;
  success_likelihood: number;
  cost_efficiency: number;
  estimate: CostEstimate;
  target: CostTarget;
  valid: boolean;
  warnings: number;
  /** Verify's verdict the score was computed from. */
  verification: VerificationResult;
}

/** A CostTarget with defaults filled in, checked: positive finite targets and a weight in [0, 1]. */
export function costTarget(partial: Partial<CostTarget> = {}): CostTarget {
  const target: CostTarget = { ...COST_TARGET_DEFAULTS, ...definedFields(partial) };
  for (const field of ["target_tool_calls", "target_duration_ms", "target_actions"] as const) {
    const v = target[field];
    if (typeof v !== "number" || !Number.isFinite(v) || v <= 0)
      throw new CarError("invalid_params", `CostTarget.${field} must be a positive number, got ${String(v)}`);
  }
  const w = target.cost_weight;
  if (typeof w !== "number" || !Number.isFinite(w) || w < 0 || w > 1)
    throw new CarError("invalid_params", `CostTarget.cost_weight must be in [0, 1], got ${String(w)}`);
  return target;
}

/** Scores one candidate (JSON text, a plain object or a parsed proposal). A proposal that does not parse throws `invalid_proposal`. */
export function scoreProposal(input: unknown, options: ScoreOptions = {}): ProposalScore {
  const target = costTarget(options.target);
  const parsed = isParsed(input) ? input : parseProposalWithGraph(input);
  const verification = options.verification ?? verify(parsed.proposal, options.verifyOptions ?? {});
  const history = options.history ?? new Map();
  const actions = parsed.proposal.actions;

  let warnings = 0;
  for (const issue of verification.issues) if (issue.severity === "warning") warnings++;
  let likelihood = verification.valid ? WARNING_FACTOR ** warnings : 0;
  let toolCalls = 0;
  const perCall = target.target_duration_ms / target.target_actions;
  const cost = new Float64Array(actions.length);
  for (let i = 0; i < actions.length; i++) {
    const action = actions[i]!;
    if (action.type !== "tool_call" || action.tool === undefined) continue;
    toolCalls++;
    const stats = history.get(action.tool);
    cost[i] = stats?.mean_duration_ms ?? perCall;
    likelihood *= survival(action, stats === undefined ? 1 : (stats.succeeded + 1) / (stats.succeeded + stats.failed + 1));
  }
  const estimate: CostEstimate = { tool_calls: toolCalls, actions: actions.length, duration_ms: criticalPath(parsed.graph, cost) };
  const efficiency =
    (ratio(target.target_tool_calls, estimate.tool_calls) +
      ratio(target.target_actions, estimate.actions) +
      ratio(target.target_duration_ms, estimate.duration_ms)) /
    3;
  const w = target.cost_weight;
  return {
    score: likelihood * (1 - w) + efficiency * w,
    success_likelihood: likelihood,
    cost_efficiency: efficiency,
    estimate,
    target,
    valid: verification.valid,
    warnings,
    verification,
  };
}

/** The chance an action's failure does not end the run, given one call succeeds with `p`. */
function survival(action: Action, p: number): number {
  if (action.failure_behavior === "skip") return 1;
  if (action.failure_behavior === "retry") return 1 - (1 - p) ** (action.max_retries + 1);
  return p;
}

/** min(1, target / estimate); an estimate of zero is on target. */
function ratio(target: number, estimate: number): number {
  return estimate <= 0 ? 1 : Math.min(1, target / estimate);
}

/** The longest path through the DAG, each action weighted by its cost. */
function criticalPath(graph: DependencyGraph, cost: Float64Array): number {
  const finish = new Float64Array(cost.length);
  let longest = 0;
  for (const i of graph.order) {
    let start = 0;
    for (const p of graph.preds[i]!) if (finish[p]! > start) start = finish[p]!;
    finish[i] = start + cost[i]!;
    if (finish[i]! > longest) longest = finish[i]!;
  }
  return longest;
}

export function isParsed(input: unknown): input is ParsedProposal {
  return typeof input === "object" && input !== null && "proposal" in input && "graph" in input && !("actions" in input);
}

function definedFields(partial: Partial<CostTarget>): Partial<CostTarget> {
  const out: Partial<CostTarget> = {};
  for (const [k, v] of Object.entries(partial)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}
