/**
 * `multi.pipeline` / `swarm` / `supervisor` / `map_reduce` / `vote`: the
 * multi-agent patterns from @car/engine/multi, with every agent executed by
 * the client through a `multi.run_agent` request on this same socket. The
 * runs write their events to the session's log, so `events.query` sees them.
 */
import type { AgentOutput, AgentSpec, JsonObject, JsonValue } from "@car/ir";
import {
  type AgentFn,
  type BudgetLimits,
  type MultiOptions,
  runMapReduce,
  runPipeline,
  runSupervisor,
  runSwarm,
  runVote,
  type SwarmMode,
} from "@car/engine/multi";
import { type MethodContext, type MethodTable, agentMethod } from "../method.ts";
import { invalidParams, optionalNumber, optionalObject, paramsObject, requireArray, requireString, requireValue } from "../params.ts";
import type { Session } from "../session.ts";

/** Runs one agent on the client. Its answer (an AgentOutput, or its JSON text) is validated strictly by the engine. */
function clientAgent(session: Session): AgentFn {
  return async (spec, task, ctx) => {
    const id = session.nextCallbackId("agent");
    const params: JsonObject = {
      spec: spec as unknown as JsonObject,
      task,
      run_id: ctx.run_id,
      call_id: ctx.call_id,
      request_id: id,
      step: ctx.step,
      original_task: ctx.original_task,
      inputs: ctx.inputs as unknown as JsonValue,
      session_id: session.id,
    };
    if (ctx.timeout_ms !== null) params["timeout_ms"] = ctx.timeout_ms;
    const answer = await session.peer.call("multi.run_agent", params, id, ctx.signal);
    return answer as unknown as AgentOutput | string;
  };
}

/** Options every pattern shares: the session's runtime (its event log, clock, ids), the budget, the per-agent timeout. */
function runOptions(p: JsonObject, ctx: MethodContext): MultiOptions {
  const budget = optionalObject(p, "budget");
  const agentTimeout = optionalNumber(p, "agent_timeout_ms");
  const maxConcurrency = optionalNumber(p, "max_concurrency");
  return {
    runtime: ctx.session.runtime,
    signal: ctx.signal,
    // An agent call is never waited on longer than a tool callback would be.
    agentTimeoutMs: agentTimeout ?? ctx.session.options.toolTimeoutMs,
    ...(budget === undefined ? {} : { budget: budget as BudgetLimits }),
    ...(maxConcurrency === undefined ? {} : { maxConcurrency }),
  };
}

/** Specs are validated strictly by the engine (every AgentSpec field is required). */
function specs(p: JsonObject, key: string): AgentSpec[] {
  return requireArray(p, key) as unknown as AgentSpec[];
}

function spec(p: JsonObject, key: string): AgentSpec {
  return requireValue(p, key) as unknown as AgentSpec;
}

function optionalSpec(p: JsonObject, key: string): AgentSpec | null {
  const v = p[key];
  return v === undefined || v === null ? null : (v as unknown as AgentSpec);
}

async function pipeline(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = paramsObject(params);
  const result = await runPipeline(specs(p, "stages"), requireString(p, "task"), clientAgent(ctx.session), runOptions(p, ctx));
  return result as unknown as JsonValue;
}

async function swarm(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = paramsObject(params);
  const rounds = optionalNumber(p, "rounds");
  const result = await runSwarm(requireString(p, "mode") as SwarmMode, specs(p, "agents"), requireString(p, "task"), clientAgent(ctx.session), {
    ...runOptions(p, ctx),
    synthesizer: optionalSpec(p, "synthesizer"),
    ...(rounds === undefined ? {} : { rounds }),
  });
  return result as unknown as JsonValue;
}

async function supervisor(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = paramsObject(params);
  const maxRounds = optionalNumber(p, "max_rounds");
  const result = await runSupervisor(specs(p, "workers"), spec(p, "supervisor"), requireString(p, "task"), clientAgent(ctx.session), {
    ...runOptions(p, ctx),
    ...(maxRounds === undefined ? {} : { max_rounds: maxRounds }),
  });
  return result as unknown as JsonValue;
}

async function mapReduce(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = paramsObject(params);
  const items = requireArray(p, "items").map((item, i) => {
    if (typeof item !== "string") throw invalidParams(`items[${i}] must be a string`);
    return item;
  });
  const result = await runMapReduce(spec(p, "mapper"), spec(p, "reducer"), requireString(p, "task"), items, clientAgent(ctx.session), runOptions(p, ctx));
  return result as unknown as JsonValue;
}

async function vote(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = paramsObject(params);
  const result = await runVote(specs(p, "agents"), requireString(p, "task"), clientAgent(ctx.session), {
    ...runOptions(p, ctx),
    synthesizer: optionalSpec(p, "synthesizer"),
  });
  return result as unknown as JsonValue;
}

export const multiMethods: MethodTable = {
  "multi.pipeline": agentMethod(pipeline),
  "multi.swarm": agentMethod(swarm),
  "multi.supervisor": agentMethod(supervisor),
  "multi.map_reduce": agentMethod(mapReduce),
  "multi.vote": agentMethod(vote),
};
