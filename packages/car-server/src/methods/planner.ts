/**
 * `planner.run`: the planner loop of @car/engine/planner with the model on
 * the client. Each attempt sends a `planner.propose` request on this socket
 * (the task, the attempt number, every earlier attempt's feedback, the
 * session's tools and the CostTarget); the client answers with a proposal or
 * a list of candidates, and the session's runtime verifies, ranks and
 * executes it — its tool calls come back to the client as `tools.execute`.
 */
import type { CostTarget, JsonObject, JsonValue } from "@car/ir";
import { serializeProposalResult } from "@car/ir";
import { type PlanAttempt, type ProposeFn, runPlanLoop } from "@car/engine/planner";
import { type MethodContext, type MethodTable, agentMethod } from "../method.ts";
import { optionalNumber, optionalObject, paramsObject, requireString } from "../params.ts";
import type { Session } from "../session.ts";

/** Asks the client's model for a plan; the wait is bounded like a tool callback's. */
function clientModel(session: Session, timeoutMs: number): ProposeFn {
  return async (request, signal) => {
    const id = session.nextCallbackId("plan");
    const bounded = signal === undefined ? AbortSignal.timeout(timeoutMs) : AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]);
    return session.peer.call("planner.propose", { ...request, request_id: id, session_id: session.id } as unknown as JsonValue, id, bounded);
  };
}

/** An attempt on the wire: its verdict, feedback and scores (verify's full report stays out; the feedback carries its errors). */
function attemptJson(a: PlanAttempt): JsonObject {
  const out: JsonObject = { attempt: a.attempt, verdict: a.verdict, candidates: a.candidates };
  if (a.score !== undefined) {
    const { score, success_likelihood, cost_efficiency, estimate, target, valid, warnings } = a.score;
    out["score"] = { score, success_likelihood, cost_efficiency, estimate: { ...estimate }, target: { ...target }, valid, warnings };
  }
  if (a.proposal_id !== undefined) out["proposal_id"] = a.proposal_id;
  if (a.feedback !== undefined) out["feedback"] = a.feedback as unknown as JsonObject;
  return out;
}

async function run(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = paramsObject(params);
  const maxAttempts = optionalNumber(p, "max_attempts");
  const target = optionalObject(p, "target");
  const result = await runPlanLoop({
    runtime: ctx.session.runtime,
    task: requireString(p, "task"),
    propose: clientModel(ctx.session, optionalNumber(p, "propose_timeout_ms") ?? ctx.session.options.toolTimeoutMs),
    execute: { toolCaller: ctx.session.toolCaller, session_id: ctx.session.id, signal: ctx.signal },
    signal: ctx.signal,
    ...(maxAttempts === undefined ? {} : { maxAttempts }),
    ...(target === undefined ? {} : { target: target as Partial<CostTarget> }),
  });
  const out: JsonObject = { run_id: result.run_id, outcome: result.outcome, attempts: result.attempts.map(attemptJson) };
  if (result.result !== undefined) out["result"] = serializeProposalResult(result.result) as unknown as JsonValue;
  return out;
}

export const plannerMethods: MethodTable = { "planner.run": agentMethod(run, { tenancy: "proposal", resources: ["proposal"] }) };
