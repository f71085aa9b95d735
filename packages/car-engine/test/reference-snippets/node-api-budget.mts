// biome-ignore-all format: the reference's snippet is kept verbatim
// biome-ignore-all lint: the reference's snippet is kept verbatim
// @ts-nocheck — the reference's snippet is kept verbatim, untyped stand-ins included
// node-api.md § 9, the example in BudgetLimits' doc comment (its two lines,
// without the comment's ` * ` prefix). It has no import line; the harness imports
// runSwarm, registers a runner that reports its token use, and gives `agents`
// and `task` (which the example leaves to the reader) two agents in the seed
// AgentSpec shape.

// harness:
import { registerAgentRunner, runSwarm } from "@car/engine/compat";
await registerAgentRunner(async (specJson, task) => {
  const { name } = JSON.parse(specJson);
  return JSON.stringify({ name, answer: `${name}: ${task}`, turns: 1, tool_calls: 0, duration_ms: 1, error: null, tokens: { input_tokens: 10, output_tokens: 5 } });
});
const spec = (name) => ({ name, system_prompt: name, tools: [], max_turns: 1, metadata: {} });
const agents = JSON.stringify([spec("a"), spec("b")]);
const task = "t";

// ---- verbatim from node-api.md § 9 BudgetLimits (only the import line changed: 'car-runtime' -> '@car/engine/compat') ----
const budget = JSON.stringify({ max_total_tokens: 200000, max_agents: 12 });
await runSwarm("parallel", agents, task, null, budget);
// ---- end of the verbatim part ----

// harness:
console.log("HARNESS " + (await runSwarm("parallel", agents, task, null, budget)));
