/**
 * `multi.*`: the multi-agent patterns. Each agent runs on the client
 * through a `multi.run_agent` request; the engine checks every AgentSpec
 * and AgentOutput strictly, so the schemas here only name them.
 */
import { method } from "./declaration.ts";
import { anyObject, anyValue, ir, listOf, object, optional, string } from "./schema.ts";

const spec = ir("AgentSpec");
const specs = listOf(spec);
/** Options every pattern shares. */
const shared = { budget: optional("object"), agent_timeout_ms: optional("number"), max_concurrency: optional("number") } as const;

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
    params: object({ workers: specs, supervisor: anyValue, task: string, max_rounds: optional("number"), ...shared }, ["workers", "supervisor", "task"]),
    result: anyObject,
  }),
  "multi.map_reduce": method({
    role: "agent",
    summary: "The mapper runs on every item, the reducer on the answers.",
    params: object({ mapper: anyValue, reducer: anyValue, items: listOf(anyValue), task: string, ...shared }, ["mapper", "reducer", "items", "task"]),
    result: anyObject,
  }),
  "multi.vote": method({
    role: "agent",
    summary: "Agents answer independently; the majority (or a synthesizer) decides.",
    params: object({ agents: specs, task: string, synthesizer: { anyOf: [spec, { type: "null" }] }, ...shared }, ["agents", "task"]),
    result: anyObject,
  }),
} as const;
