// biome-ignore-all format: the reference's snippet is kept verbatim
// biome-ignore-all lint: the reference's snippet is kept verbatim
// @ts-nocheck — the reference's snippet is kept verbatim, untyped stand-ins included
// cookbook-04-multi-agent.md § The agent runner. Stand-in: `callYourLlm`, which
// the page leaves to the reader, answers without a model: "answer from <model>".
// The other cookbook-04 fixtures import this module first, as the page says
// ("after this is registered once, every multi-agent function below reuses it").

// ---- verbatim from cookbook-04 § The agent runner (only the import line changed: 'car-runtime' -> '@car/engine/compat') ----
import { registerAgentRunner } from '@car/engine/compat';

registerAgentRunner(async (specJson, task) => {
  const spec = JSON.parse(specJson);
  // spec = { name, role, model, system_prompt }

  // Call your LLM however you like — Claude, GPT, local model, doesn't matter.
  const reply = await callYourLlm(spec.model, [
    { role: 'system', content: spec.system_prompt ?? spec.role ?? '' },
    { role: 'user', content: task },
  ]);

  // Return AgentOutput JSON.
  return JSON.stringify({
    name: spec.name,
    response: reply.text,
    tool_calls: reply.tool_calls ?? [],
  });
});
// ---- end of the verbatim part ----

// harness:
async function callYourLlm(model, messages) {
  return { text: `answer from ${model}`, tool_calls: [] };
}
