/**
 * `multi.pipeline` / `swarm` / `supervisor` / `map_reduce` / `vote` /
 * `tournament` / `subtask`: the multi-agent patterns from @car/engine/multi, with every agent executed by
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
  runSubtask,
  runSupervisor,
  runSwarm,
  runTournament,
  runVote,
  type SwarmMode,
} from "@car/engine/multi";
import { type MethodContext, type MethodTable, agentMethod } from "../method.ts";
import { invalidParams, optionalNumber, optionalObject, paramsObject, requireArray, requireString, requireValue } from "../params.ts";
import type { Session } from "../session.ts";
import type { HeldAccount } from "../held-bytes.ts";
import { serverAdmission } from "../admission.ts";

/**
 * Runs one agent on the client. Its answer (an AgentOutput, or its JSON
 * text) is validated strictly by the engine. The pattern keeps every answer
 * until it returns, so each answer's bytes are held on the connection's
 * share of the server's bound (`answers`) until the call ends.
 */
function clientAgent(session: Session, held: HeldAccount, answers: AnswerBytes): AgentFn {
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
    if (ctx.tools.length > 0) params["tools"] = ctx.tools as unknown as JsonValue;
    let bytes = 0;
    const answer = await session.peer.call("multi.run_agent", params, id, ctx.signal, (n) => {
      bytes += n;
    });
    held.take(bytes, "multi.run_agent answers");
    answers.held += bytes;
    return answer as unknown as AgentOutput | string;
  };
}

interface AnswerBytes {
  held: number;
}

/** Runs one pattern call with its answers held on the connection's account, given back when the call ends. */
async function holdingAnswers(ctx: MethodContext, run: (agent: AgentFn) => Promise<unknown>): Promise<JsonValue> {
  const held = ctx.held;
  const answers: AnswerBytes = { held: 0 };
  try {
    return (await run(clientAgent(ctx.session, held, answers))) as JsonValue;
  } finally {
    held.release(answers.held);
  }
}

/** The params every pattern takes beside its own. */
const SHARED_PARAMS = ["task", "budget", "agent_timeout_ms", "max_concurrency"];

/**
 * Refuses a param the pattern does not take: a misspelled `budget` or
 * `max_rounds` would otherwise run without the limit its caller set.
 */
function onlyParams(p: JsonObject, own: readonly string[]): JsonObject {
  const known = [...own, ...SHARED_PARAMS];
  for (const key of Object.keys(p)) {
    if (!known.includes(key)) throw invalidParams(`unknown param '${key}' (this method takes ${known.join(", ")})`);
  }
  return p;
}

/** Options every pattern shares: the session's runtime (its event log, clock, ids), the budget (read strictly by the engine), the per-agent timeout. */
function runOptions(p: JsonObject, ctx: MethodContext): MultiOptions {
  const budget = optionalObject(p, "budget");
  const agentTimeout = optionalNumber(p, "agent_timeout_ms");
  const maxConcurrency = optionalNumber(p, "max_concurrency");
  return {
    runtime: ctx.session.runtime,
    signal: ctx.signal,
    // An agent call is never waited on longer than a tool callback would be.
    agentTimeoutMs: agentTimeout ?? ctx.session.options.toolTimeoutMs,
    ...(budget === undefined ? {} : { budget: budget as unknown as BudgetLimits }),
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
  const p = onlyParams(paramsObject(params), ["stages"]);
  return holdingAnswers(ctx, (agent) => runPipeline(specs(p, "stages"), requireString(p, "task"), agent, runOptions(p, ctx)));
}

async function swarm(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = onlyParams(paramsObject(params), ["mode", "agents", "synthesizer", "rounds"]);
  const rounds = optionalNumber(p, "rounds");
  return holdingAnswers(ctx, (agent) =>
    runSwarm(requireString(p, "mode") as SwarmMode, specs(p, "agents"), requireString(p, "task"), agent, {
      ...runOptions(p, ctx),
      synthesizer: optionalSpec(p, "synthesizer"),
      ...(rounds === undefined ? {} : { rounds }),
    }),
  );
}

async function supervisor(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = onlyParams(paramsObject(params), ["workers", "supervisor", "max_rounds"]);
  const maxRounds = optionalNumber(p, "max_rounds");
  return holdingAnswers(ctx, (agent) =>
    runSupervisor(specs(p, "workers"), spec(p, "supervisor"), requireString(p, "task"), agent, {
      ...runOptions(p, ctx),
      ...(maxRounds === undefined ? {} : { max_rounds: maxRounds }),
    }),
  );
}

async function mapReduce(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = onlyParams(paramsObject(params), ["mapper", "reducer", "items"]);
  const items = requireArray(p, "items").map((item, i) => {
    if (typeof item !== "string") throw invalidParams(`items[${i}] must be a string`);
    return item;
  });
  return holdingAnswers(ctx, (agent) => runMapReduce(spec(p, "mapper"), spec(p, "reducer"), requireString(p, "task"), items, agent, runOptions(p, ctx)));
}

async function vote(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = onlyParams(paramsObject(params), ["agents", "synthesizer"]);
  return holdingAnswers(ctx, (agent) =>
    runVote(specs(p, "agents"), requireString(p, "task"), agent, {
      ...runOptions(p, ctx),
      synthesizer: optionalSpec(p, "synthesizer"),
    }),
  );
}

async function tournament(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = onlyParams(paramsObject(params), ["competitors", "judge"]);
  return holdingAnswers(ctx, (agent) => runTournament(specs(p, "competitors"), spec(p, "judge"), requireString(p, "task"), agent, runOptions(p, ctx)));
}

async function subtask(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = onlyParams(paramsObject(params), ["main"]);
  // The spawns of each turn are a proposal: held to the session's admission guard like every other source of actions.
  return holdingAnswers(ctx, (agent) =>
    runSubtask(spec(p, "main"), requireString(p, "task"), agent, { ...runOptions(p, ctx), admission: serverAdmission(ctx.session) }),
  );
}

/** Every pattern holds its agents' answers until it returns. */
const ANSWERS = { resources: ["agent_answers"] } as const;

export const multiMethods: MethodTable = {
  "multi.pipeline": agentMethod(pipeline, ANSWERS),
  "multi.swarm": agentMethod(swarm, ANSWERS),
  "multi.supervisor": agentMethod(supervisor, ANSWERS),
  "multi.map_reduce": agentMethod(mapReduce, ANSWERS),
  "multi.vote": agentMethod(vote, ANSWERS),
  "multi.tournament": agentMethod(tournament, ANSWERS),
  "multi.subtask": agentMethod(subtask, ANSWERS),
};
