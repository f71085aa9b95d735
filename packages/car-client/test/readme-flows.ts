/** The README's cookbook 06 flows, type-checked (`pnpm typecheck`): they compile against the declared protocol as written there. */
import { CarClient, ReplyError } from "../src/index.ts";
declare const url: string;
declare const token: string;
declare function myModel(system: string, task: string): Promise<string>;
declare const agentA: import("@car/ir").AgentSpec;
export async function flows(): Promise<void> {
  const car = await CarClient.connect(url, { token });
  car.onRequest("tools.execute", async ({ tool, params }) => {
    if (tool === "shell") return { stdout: `ran ${String(params.command)}\n`, code: 0 };
    throw new ReplyError(-32000, `unknown tool: ${tool}`);
  });
  await car.call("session.init", {
    client_id: "cookbook",
    tools: [{ name: "shell", description: "run a shell command" }],
    policies: [{ name: "no_rm", rule: "deny_tool_param", target: "shell", key: "command", pattern: "rm -rf" }],
  });
  const result = await car.call("proposal.submit", {
    proposal: { id: "p1", actions: [{ id: "a1", type: "tool_call", tool: "shell", parameters: { command: "echo hi" } }] },
  });
  console.log(result.results[0]?.status);
  const proposal = { id: "p2", actions: [{ id: "w", type: "state_write", parameters: { key: "k", value: 1 } }] } as const;
  const check = await car.call("verify", { proposal });
  if (!check.valid) throw new Error(JSON.stringify(check.issues));
  const stop = new AbortController();
  await car.call("proposal.submit", { proposal }, { signal: stop.signal, timeoutMs: 60_000 });
  car.onRequest("multi.run_agent", async ({ spec, task }) => ({
    name: spec.name,
    answer: await myModel(spec.system_prompt, task),
    turns: 1,
    tool_calls: 0,
    duration_ms: 0,
    error: null,
  }));
  await car.call("multi.vote", { agents: [agentA], task: "Is this migration safe?" });
  const { pending } = await car.call("permission.pending", { proposal });
  for (const row of pending) await car.call("permission.approve", { fingerprint: row.fingerprint, required_tier: row.required });
}
