/**
 * The planner loop: a model proposes, the runtime verifies, the findings go
 * back to the model, and a verified proposal is executed; a failed run goes
 * back too, with what failed, for a new plan. The model is any function that
 * returns proposal JSON (text, an object, or a list of candidates, which are
 * ranked by their CostTarget score), so the loop works with any provider.
 * The number of attempts is bounded, and each attempt and its verdict is an
 * event in the runtime's log.
 */
import { CarError, isCarError, rfc3339, shortId } from "@car/ir";
import type { CostTarget, JsonObject, ProposalResult, ToolSchema, VerificationIssue } from "@car/ir";
import type { ExecuteOptions, Runtime } from "../runtime.ts";
import type { ToolCallback } from "../tools/handler.ts";
import { PLANNER_EVENT_KINDS } from "../events/event-kinds.ts";
import { rankProposals } from "./rank.ts";
import type { ProposalScore } from "./score.ts";
import { costTarget } from "./score.ts";
import { toolHistory } from "./tool-history.ts";

export const DEFAULT_PLAN_ATTEMPTS = 3;
export const MAX_PLAN_ATTEMPTS = 20;

export type PlanVerdict = "model_error" | "invalid_proposal" | "verification_failed" | "execution_failed" | "succeeded";

/** What an earlier attempt taught, handed back to the model. */
export type PlanFeedback =
  | { attempt: number; verdict: "model_error" | "invalid_proposal"; message: string }
  | { attempt: number; verdict: "verification_failed"; issues: VerificationIssue[] }
  | { attempt: number; verdict: "execution_failed"; proposal_id: string; failures: { action_id: string; status: string; error: string | null }[] };

/** What the model is asked for on each attempt. */
export interface PlanRequest {
  task: string;
  /** 1-based. */
  attempt: number;
  max_attempts: number;
  /** Every earlier attempt's feedback, oldest first. */
  feedback: PlanFeedback[];
  /** The runtime's registered tools, so the model proposes calls that exist. */
  tools: ToolSchema[];
  target: CostTarget;
}

/** The model: returns a proposal (JSON text or object) or a list of candidates. */
export type ProposeFn = (request: PlanRequest, signal: AbortSignal | undefined) => unknown;

export interface PlanAttempt {
  attempt: number;
  verdict: PlanVerdict;
  /** How many candidates the model returned. */
  candidates: number;
  /** The score of the candidate that was chosen, when one parsed. */
  score?: ProposalScore;
  /** The executed proposal's id. */
  proposal_id?: string;
  feedback?: PlanFeedback;
}

export interface PlanLoopOptions {
  runtime: Runtime;
  propose: ProposeFn;
  task: string;
  /** 1 to 20; default 3. */
  maxAttempts?: number;
  target?: Partial<CostTarget>;
  /** The JSON-string tool callback, for tools registered without a handler. */
  dispatch?: ToolCallback;
  execute?: ExecuteOptions;
  signal?: AbortSignal;
}

export interface PlanLoopResult {
  run_id: string;
  outcome: "succeeded" | "exhausted";
  attempts: PlanAttempt[];
  /** The successful run's result, or the last executed run's when every attempt failed. */
  result?: ProposalResult;
}

/** Runs propose → verify → execute until a run succeeds or the attempts run out. */
export async function runPlanLoop(options: PlanLoopOptions): Promise<PlanLoopResult> {
  const { runtime, propose, task } = options;
  if (typeof propose !== "function") throw new CarError("invalid_params", "runPlanLoop needs a propose function");
  if (typeof task !== "string") throw new CarError("invalid_params", "runPlanLoop needs a task string");
  const maxAttempts = options.maxAttempts ?? DEFAULT_PLAN_ATTEMPTS;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > MAX_PLAN_ATTEMPTS) {
    throw new CarError("invalid_params", `maxAttempts must be an integer from 1 to ${MAX_PLAN_ATTEMPTS}, got ${String(maxAttempts)}`);
  }
  const target = costTarget(options.target);
  const run_id = `plan-${shortId(runtime.ids)}`;
  const emit = (kind: string, data: JsonObject): void => {
    runtime.events.append({ kind, proposal_id: run_id, timestamp: rfc3339(runtime.clock.now()), data });
  };
  emit(PLANNER_EVENT_KINDS.started, { max_attempts: maxAttempts, target: { ...target } });

  const attempts: PlanAttempt[] = [];
  const feedback: PlanFeedback[] = [];
  let last: ProposalResult | undefined;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    if (options.signal?.aborted === true) throw new CarError("cancelled", "the planner loop was cancelled");
    const record = await runAttempt(attempt);
    attempts.push(record.attempt);
    emit(PLANNER_EVENT_KINDS.attempt, attemptData(record.attempt));
    if (record.result !== undefined) last = record.result;
    if (record.attempt.verdict === "succeeded") {
      emit(PLANNER_EVENT_KINDS.completed, { outcome: "succeeded", attempts: attempt });
      return { run_id, outcome: "succeeded", attempts, result: record.result! };
    }
    feedback.push(record.attempt.feedback!);
  }
  emit(PLANNER_EVENT_KINDS.completed, { outcome: "exhausted", attempts: maxAttempts });
  return last === undefined ? { run_id, outcome: "exhausted", attempts } : { run_id, outcome: "exhausted", attempts, result: last };

  async function runAttempt(attempt: number): Promise<{ attempt: PlanAttempt; result?: ProposalResult }> {
    const request: PlanRequest = { task, attempt, max_attempts: maxAttempts, feedback: [...feedback], tools: runtime.listTools(), target };
    let answer: unknown;
    try {
      answer = await propose(request, options.signal);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { attempt: { attempt, verdict: "model_error", candidates: 0, feedback: { attempt, verdict: "model_error", message } } };
    }
    const candidates = Array.isArray(answer) ? answer : [answer];
    if (candidates.length === 0) {
      const message = "the model returned no candidate proposal";
      return { attempt: { attempt, verdict: "invalid_proposal", candidates: 0, feedback: { attempt, verdict: "invalid_proposal", message } } };
    }
    const verifyOptions = { state: runtime.state.snapshot(), tools: runtime.listTools() };
    const ranked = rankProposals(candidates, { target, history: toolHistory(runtime.events), verifyOptions });
    const best = ranked[0]!;
    if (best.score === undefined || best.proposal === undefined) {
      const message = best.error?.message ?? "the proposal did not parse";
      return { attempt: { attempt, verdict: "invalid_proposal", candidates: candidates.length, feedback: { attempt, verdict: "invalid_proposal", message } } };
    }
    const base: PlanAttempt = { attempt, verdict: "succeeded", candidates: candidates.length, score: best.score };
    if (!best.score.valid) {
      const issues = best.score.verification.issues.filter((i) => i.severity === "error");
      return { attempt: { ...base, verdict: "verification_failed", feedback: { attempt, verdict: "verification_failed", issues } } };
    }
    let result: ProposalResult;
    try {
      // The pair ranking parsed: the runtime takes it as it is.
      result = await runtime.executeProposal(best.proposal, options.dispatch, options.execute);
    } catch (error) {
      if (!isCarError(error)) throw error;
      return { attempt: { ...base, verdict: "invalid_proposal", feedback: { attempt, verdict: "invalid_proposal", message: error.message } } };
    }
    const failures = result.results
      .filter((r) => r.status === "failed" || r.status === "rejected" || (r.rolled_back ?? false))
      .map((r) => ({ action_id: r.action_id, status: r.rolled_back === true ? `${r.status} (rolled back)` : r.status, error: r.error ?? null }));
    const proposal_id = result.proposal_id;
    if (failures.length === 0) return { attempt: { ...base, proposal_id }, result };
    return {
      attempt: { ...base, verdict: "execution_failed", proposal_id, feedback: { attempt, verdict: "execution_failed", proposal_id, failures } },
      result,
    };
  }
}

/** An attempt as an audit record: verdicts, counts and scores, never the proposal's parameters. */
function attemptData(a: PlanAttempt): JsonObject {
  const data: JsonObject = { attempt: a.attempt, verdict: a.verdict, candidates: a.candidates };
  if (a.score !== undefined) {
    data["score"] = a.score.score;
    data["success_likelihood"] = a.score.success_likelihood;
    data["cost_efficiency"] = a.score.cost_efficiency;
  }
  if (a.proposal_id !== undefined) data["proposal_id"] = a.proposal_id;
  const f = a.feedback;
  if (f?.verdict === "verification_failed") data["errors"] = f.issues.length;
  if (f?.verdict === "execution_failed") data["failed_actions"] = f.failures.map((x) => x.action_id);
  if (f?.verdict === "model_error" || f?.verdict === "invalid_proposal") data["message"] = f.message.slice(0, 500);
  return data;
}
