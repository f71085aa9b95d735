/**
 * `multi.*`: the multi-agent patterns. Each agent runs on the client
 * through a `multi.run_agent` request; the engine checks every AgentSpec
 * and AgentOutput strictly, so the schemas here only name them.
 */
import { method } from "./declaration.ts";
import { anyObject, ir, listOf, object, optional, string } from "./schema.ts";

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

export const multiMethods = {
  "multi.pipeline": method({
    role: "agent",
    summary: "Runs the stages in order, each stage's answer the next one's input.",
    params: object({ stages: specs, task: string, ...shared }, ["stages", "task"]),
    result: anyObject,
  }),
  "multi.swarm": method({
    role: "agent",
    summary: "Runs agents in parallel, in sequence or in debate rounds, with an optional synthesizer.",
    params: object({ mode: string, agents: specs, task: string, synthesizer: { anyOf: [spec, { type: "null" }] }, rounds: optional("number"), ...shared }, [
      "mode",
      "agents",
      "task",
    ]),
    result: anyObject,
  }),
  "multi.supervisor": method({
    role: "agent",
    summary: "A supervisor agent directs workers over rounds until it approves.",
    params: object({ workers: specs, supervisor: spec, task: string, max_rounds: optional("number"), ...shared }, ["workers", "supervisor", "task"]),
    result: anyObject,
  }),
  "multi.map_reduce": method({
    role: "agent",
    summary: "The mapper runs on every item, the reducer on the answers.",
    params: object({ mapper: spec, reducer: spec, items: listOf(string), task: string, ...shared }, ["mapper", "reducer", "items", "task"]),
    result: anyObject,
  }),
  "multi.vote": method({
    role: "agent",
    summary: "Agents answer independently; the majority (or a synthesizer) decides.",
    params: object({ agents: specs, task: string, synthesizer: { anyOf: [spec, { type: "null" }] }, ...shared }, ["agents", "task"]),
    result: anyObject,
  }),
  "multi.tournament": method({
    role: "agent",
    summary: "Competitors answer; the judge ranks them pairwise to one winner.",
    params: object({ competitors: specs, judge: spec, task: string, ...shared }, ["competitors", "judge", "task"]),
    result: anyObject,
  }),
  "multi.subtask": method({
    role: "agent",
    summary: "The main agent spawns subtasks turn by turn (each turn's spawns held to the session's admission guard).",
    params: object({ main: spec, task: string, ...shared }, ["main", "task"]),
    result: anyObject,
  }),
} as const;
