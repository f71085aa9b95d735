// The flows of the original's cookbook 04 ("Multi-agent"), over the socket:
// the agent runner answers the server's multi.run_agent requests, and each
// pattern is one daemon call — what the original's car-runtime functions were
// (thin clients of the daemon). The runner is a deterministic stand-in for
// "call your LLM".
//
// Changed from the original (README "The original's clients"):
// - the import and the connection step: `new CarRuntime()` connects to
//   CAR_DAEMON_URL with CAR_AUTH_TOKEN (the original found its daemon the same way);
// - `registerAgentRunner(fn)` is `rt.registerDaemonHandler("multi.run_agent", …)`,
//   and `runSwarm(mode, agents, task, synth)` (and the others) is
//   `rt.daemonCall("multi.swarm", { mode, agents, task, synthesizer })`;
// - AgentSpec and AgentOutput are the seed's strict shapes (the reference's
//   own note on cookbook 04): `{ name, system_prompt, tools, max_turns, metadata }`
//   with the model in `metadata`, and `{ name, answer, turns, tool_calls, duration_ms, error }`.
import { CarRuntime } from "@car/engine/compat";

const rt = new CarRuntime();

let leadTurns = 0;

/** "Call your LLM however you like": here, an answer made from the spec and the task. */
async function callYourLlm(spec: { name: string; system_prompt: string; metadata: { model?: string } }, task: string): Promise<string> {
  if (spec.name === "lead") return ++leadTurns === 1 ? '{"delegate": [{"worker": "coder", "task": "implement"}]}' : '{"final_answer": "binary search done"}';
  if (spec.name === "judge") return '{"winner": "B"}';
  if (["a", "b", "c"].includes(spec.name) && task.startsWith("Will")) return spec.name === "c" ? "yes" : "no";
  return `${spec.name} (${spec.metadata.model ?? "?"}): ${task.split("\n")[0]}`;
}

// registerAgentRunner(async (specJson, task) => …)
rt.registerDaemonHandler("multi.run_agent", async (paramsJson) => {
  const { spec, task } = JSON.parse(paramsJson);
  const answer = await callYourLlm(spec, task);
  return JSON.stringify({ name: spec.name, answer, turns: 1, tool_calls: 0, duration_ms: 1, error: null });
});

const agent = (name: string, role: string, model: string) => ({ name, system_prompt: role, tools: [], max_turns: 1, metadata: { model } });

async function run(method: string, params: unknown): Promise<void> {
  const result = JSON.parse(await rt.daemonCall(method, JSON.stringify(params)));
  console.log(`${method} ${JSON.stringify(result)}`);
}

await run("multi.swarm", {
  mode: "parallel",
  agents: [
    agent("researcher", "gather facts", "gpt-5"),
    agent("critic", "find weaknesses", "claude-opus-4-7"),
    agent("writer", "compose summary", "claude-sonnet-4-6"),
  ],
  task: "Should we move the deploy step before the test step?",
  synthesizer: null,
});
await run("multi.pipeline", {
  stages: [
    agent("gather", "collect requirements", "gpt-5"),
    agent("design", "propose architecture", "claude-opus-4-7"),
    agent("critic", "find weaknesses", "claude-sonnet-4-6"),
  ],
  task: "Build a deduplication pipeline for our event stream.",
});
await run("multi.supervisor", {
  workers: [agent("coder", "implement", "claude-opus-4-7"), agent("tester", "verify", "claude-sonnet-4-6")],
  supervisor: agent("lead", "pm", "gpt-5"),
  task: "Implement and verify a binary search.",
  max_rounds: 3,
});
await run("multi.map_reduce", {
  mapper: agent("classifier", "label", "claude-haiku-4-5"),
  reducer: agent("aggregator", "summarize labels", "claude-sonnet-4-6"),
  task: "Label these support tickets by category.",
  items: ["ticket A...", "ticket B...", "ticket C..."],
});
await run("multi.vote", {
  agents: [agent("a", "", "gpt-5"), agent("b", "", "claude-opus-4-7"), agent("c", "", "claude-sonnet-4-6")],
  task: "Will this migration corrupt existing rows?",
  synthesizer: null,
});
await run("multi.tournament", {
  competitors: [agent("a", "", "gpt-5"), agent("b", "", "claude-opus-4-7"), agent("c", "", "claude-sonnet-4-6")],
  judge: agent("judge", "pick the better answer", "gpt-5"),
  task: "Draft the clearest migration plan.",
});
await rt.close();
