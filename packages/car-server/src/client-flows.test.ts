/**
 * `@car/client`'s README flows (the original's cookbook 06) against a real
 * `car serve`: typed calls, the client's own tools.execute and
 * multi.run_agent handlers, a deadline, and an operator approving what an
 * agent's proposal needs.
 */
import { CarClient, ReplyError } from "@car/client";
import { type AgentSpec, CarError } from "@car/ir";
import { afterEach, describe, expect, it } from "vitest";
import { useTestServer } from "../test/test-client.ts";

const fx = useTestServer("car-serve-client-flows-");
const clients: CarClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

async function connect(agentId?: string): Promise<CarClient> {
  const c = await CarClient.connect(fx.server.url, { token: fx.server.token!, ...(agentId === undefined ? {} : { agentId }) });
  clients.push(c);
  return c;
}

const agent = (name: string): AgentSpec => ({ name, system_prompt: `you are ${name}`, tools: [], max_turns: 1, metadata: {} });

describe("@car/client against car serve", () => {
  it("initialises a session with a tool and a policy, and runs a proposal whose tool runs on the client", async () => {
    const car = await connect();
    expect(car.handshake).toMatchObject({ protocol_version: 3 });
    car.onRequest("tools.execute", async ({ tool, params }) => {
      if (tool === "shell") return { stdout: `ran ${String(params.command)}\n`, code: 0 };
      throw new ReplyError(-32000, `unknown tool: ${tool}`);
    });
    const init = await car.call("session.init", {
      client_id: "cookbook",
      tools: [{ name: "shell", description: "run a shell command" }],
      policies: [{ name: "no_rm", rule: "deny_tool_param", target: "shell", key: "command", pattern: "rm -rf" }],
    });
    expect(init).toMatchObject({ tools_registered: 1, policies_registered: 1 });
    const ran = await car.call("proposal.submit", {
      proposal: { id: "p1", actions: [{ id: "a1", type: "tool_call", tool: "shell", parameters: { command: "echo hi" } }] },
    });
    expect(ran.results[0]).toMatchObject({ status: "succeeded", output: { stdout: "ran echo hi\n", code: 0 } });
    const denied = await car.call("proposal.submit", {
      proposal: { id: "p2", actions: [{ id: "a1", type: "tool_call", tool: "shell", parameters: { command: "rm -rf /" } }] },
    });
    expect(denied.results[0]?.status).not.toBe("succeeded");
  });

  it("verifies before running, and gives up on a call past its deadline with `timeout`", async () => {
    const car = await connect();
    const proposal = { id: "p3", actions: [{ id: "w", type: "state_write", parameters: { key: "k", value: 1 } }] } as const;
    expect((await car.call("verify", { proposal })).valid).toBe(true);
    await car.call("tools.register", [{ name: "wait" }]);
    car.onRequest("tools.execute", () => new Promise(() => {}));
    const slow = { id: "p4", actions: [{ id: "a", type: "tool_call", tool: "wait" }] } as const;
    const err = await car.call("proposal.submit", { proposal: slow }, { timeoutMs: 200 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CarError);
    expect(err).toMatchObject({ code: "timeout" });
  });

  it("runs a multi-agent vote with the agents answered by the client", async () => {
    const car = await connect();
    car.onRequest("multi.run_agent", async ({ spec, task }) => ({
      name: spec.name,
      answer: task.includes("safe") ? "yes" : "no",
      turns: 1,
      tool_calls: 0,
      duration_ms: 0,
      error: null,
    }));
    const vote = await car.call("multi.vote", { agents: [agent("a"), agent("b"), agent("c")], task: "Is this migration safe?" });
    expect(JSON.stringify(vote)).toContain("yes");
  });

  it("lets an operator approve what an agent's proposal needs, and refuses the agent the operator act", async () => {
    const bot = await connect("bot");
    const op = await connect();
    const proposal = { id: "deploy", actions: [{ id: "d", type: "tool_call", tool: "deploy" }] } as const;
    const { pending } = await op.call("permission.pending", { proposal });
    expect(pending.length).toBeGreaterThan(0);
    const refused = await bot
      .call("permission.approve", { fingerprint: pending[0]!.fingerprint, required_tier: pending[0]!.required })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "unauthorized", rpcCode: -32001 });
    for (const row of pending) await op.call("permission.approve", { fingerprint: row.fingerprint, required_tier: row.required });
    expect((await op.call("permission.pending", { proposal })).pending).toEqual([]);
  });
});
