/**
 * `multi.*`: the multi-agent patterns. Each agent runs on the client
 * through a `multi.run_agent` request; the engine checks every AgentSpec
 * and AgentOutput strictly, so the params schemas only name them. The
 * results are declared field by field (closed objects), as the engine's
 * patterns build them, so a client's types say exactly what comes back.
 */
import { method } from "./declaration.ts";
import { type Schema, boolean, integer, ir, listOf, number, object, optional, string, stringList } from "./schema.ts";

const spec = ir("AgentSpec");
const specs = listOf(spec);
/** A run's limits, read strictly by the engine (an unknown field is refused there). */
const budget = object({
  max_agents: optional("number"),
  max_duration_ms: optional("number"),
  max_input_tokens: optional("number"),
  max_output_tokens: optional("number"),
  max_total_tokens: optional("number"),
  max_cost_usd: optional("number"),
});
/** Options every pattern shares (the server refuses any other param, so a misspelled limit never runs unbounded). */
const shared = { budget: { anyOf: [budget, { type: "null" }] }, agent_timeout_ms: optional("number"), max_concurrency: optional("number") } as const;

/** An object with exactly these fields (a result: nothing else is sent). */
function exact<const P extends Readonly<Record<string, Schema>>, const R extends readonly (keyof P & string)[]>(properties: P, required: R) {
  return { type: "object", properties, required, additionalProperties: false } as const;
}
const nullable = <const S extends Schema>(schema: S) => ({ anyOf: [schema, { type: "null" }] }) as const;
const nullableString = { type: ["string", "null"] } as const;

/** An agent's answer (`AgentOutput`), as the engine checked it: `tokens` when the runner reported its spend. */
const output = exact(
  {
    name: string,
    answer: string,
    turns: integer,
    tool_calls: integer,
    duration_ms: number,
    error: nullableString,
    tokens: nullable(exact({ input_tokens: number, output_tokens: number, cost_usd: number }, ["input_tokens", "output_tokens"])),
  },
  ["name", "answer", "turns", "tool_calls", "duration_ms", "error"],
);
const outputs = listOf(output);

/** Fields every pattern's result carries (the engine's `RunSummary`). */
const summary = {
  run_id: string,
  task: string,
  final_answer: nullableString,
  agent_calls: integer,
  failed_calls: integer,
  cut_off: listOf(
    exact(
      {
        name: string,
        step: string,
        call_id: string,
        reason: { enum: ["timeout", "max_agents", "max_duration", "budget_exceeded", "cancelled", "upstream_failed"] },
        detail: string,
      },
      ["name", "step", "reason", "detail"],
    ),
  ),
  duration_ms: number,
  usage: exact({ input_tokens: number, output_tokens: number, total_tokens: number, cost_usd: number, unmetered_calls: integer }, [
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "cost_usd",
    "unmetered_calls",
  ]),
  budget_exceeded: nullable(
    exact(
      {
        limit: { enum: ["max_input_tokens", "max_output_tokens", "max_total_tokens", "max_cost_usd"] },
        threshold: number,
        spent: { type: ["number", "null"] },
      },
      ["limit", "threshold", "spent"],
    ),
  ),
} as const;
const SUMMARY = ["run_id", "task", "final_answer", "agent_calls", "failed_calls", "cut_off", "duration_ms", "usage", "budget_exceeded"] as const;

const tally = exact({ answer: string, count: integer, voters: stringList }, ["answer", "count", "voters"]);

export const multiMethods = {
  "multi.pipeline": method({
    role: "agent",
    summary: "Runs the stages in order, each stage's answer the next one's input.",
    params: object({ stages: specs, task: string, ...shared }, ["stages", "task"]),
    result: exact({ ...summary, stages: outputs, completed: boolean }, [...SUMMARY, "stages", "completed"]),
  }),
  "multi.swarm": method({
    role: "agent",
    summary: "Runs agents in parallel, in sequence or in debate rounds, with an optional synthesizer.",
    params: object({ mode: string, agents: specs, task: string, synthesizer: { anyOf: [spec, { type: "null" }] }, rounds: optional("number"), ...shared }, [
      "mode",
      "agents",
      "task",
    ]),
    result: exact({ ...summary, mode: { enum: ["parallel", "sequential", "debate"] }, outputs, rounds: listOf(outputs), synthesis: nullable(output) }, [
      ...SUMMARY,
      "mode",
      "outputs",
      "rounds",
      "synthesis",
    ]),
  }),
  "multi.supervisor": method({
    role: "agent",
    summary: "A supervisor agent directs workers over rounds until it approves.",
    params: object({ workers: specs, supervisor: spec, task: string, max_rounds: optional("number"), ...shared }, ["workers", "supervisor", "task"]),
    result: exact(
      {
        ...summary,
        rounds: listOf(
          exact(
            {
              round: integer,
              supervisor: output,
              decision: { enum: ["delegate", "fan_out", "final", "failed"] },
              delegations: listOf(exact({ worker: string, task: string, output }, ["worker", "task", "output"])),
            },
            ["round", "supervisor", "decision", "delegations"],
          ),
        ),
        completed: boolean,
      },
      [...SUMMARY, "rounds", "completed"],
    ),
  }),
  "multi.map_reduce": method({
    role: "agent",
    summary: "The mapper runs on every item, the reducer on the answers.",
    params: object({ mapper: spec, reducer: spec, items: listOf(string), task: string, ...shared }, ["mapper", "reducer", "items", "task"]),
    result: exact({ ...summary, map: outputs, reduce: output }, [...SUMMARY, "map", "reduce"]),
  }),
  "multi.vote": method({
    role: "agent",
    summary: "Agents answer independently; the majority (or a synthesizer) decides.",
    params: object({ agents: specs, task: string, synthesizer: { anyOf: [spec, { type: "null" }] }, ...shared }, ["agents", "task"]),
    result: exact({ ...summary, outputs, tally: listOf(tally), winner: nullable(tally), majority: boolean, tie: boolean, synthesis: nullable(output) }, [
      ...SUMMARY,
      "outputs",
      "tally",
      "winner",
      "majority",
      "tie",
      "synthesis",
    ]),
  }),
  "multi.tournament": method({
    role: "agent",
    summary: "Competitors answer; the judge ranks them pairwise to one winner.",
    params: object({ competitors: specs, judge: spec, task: string, ...shared }, ["competitors", "judge", "task"]),
    result: exact(
      {
        ...summary,
        candidates: outputs,
        matches: listOf(
          exact({ round: integer, a: string, b: string, winner: string, loser: string, decided_by: { enum: ["judge", "fallback"] }, judge: output }, [
            "round",
            "a",
            "b",
            "winner",
            "loser",
            "decided_by",
            "judge",
          ]),
        ),
        byes: listOf(exact({ round: integer, name: string }, ["round", "name"])),
        winner_name: nullableString,
        winner_answer: nullableString,
        ranking: stringList,
      },
      [...SUMMARY, "candidates", "matches", "byes", "winner_name", "winner_answer", "ranking"],
    ),
  }),
  "multi.subtask": method({
    role: "agent",
    summary: "The main agent spawns subtasks turn by turn (each turn's spawns held to the session's admission guard).",
    params: object({ main: spec, task: string, ...shared }, ["main", "task"]),
    result: exact(
      {
        ...summary,
        turns: outputs,
        subtasks: listOf(
          exact(
            {
              id: string,
              turn: integer,
              task: string,
              tools: {},
              status: { enum: ["succeeded", "failed", "rejected"] },
              output: nullable(output),
              error: nullableString,
            },
            ["id", "turn", "task", "tools", "status", "output", "error"],
          ),
        ),
        completed: boolean,
      },
      [...SUMMARY, "turns", "subtasks", "completed"],
    ),
  }),
} as const;
