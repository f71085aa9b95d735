import { describe, expect, it } from "vitest";
import { PROTOCOL } from "@car/client/protocol";
import { compileSchema, type JsonObject } from "@car/ir";
import { TestClient, useTestServer } from "../test/test-client.ts";

const fx = useTestServer("car-serve-multi-");

const agent = (name: string) => ({ name, system_prompt: `you are ${name}`, tools: [], max_turns: 1, metadata: {} });
const output = (name: string, answer: string) => ({ name, answer, turns: 1, tool_calls: 0, duration_ms: 1, error: null });

/** A client whose agents answer deterministically from their name and task. */
async function agentClient(answer: (spec: any, task: string, params: any) => string | Promise<string>): Promise<TestClient> {
  const c = await TestClient.open(fx.server.url, fx.server.token);
  fx.track(c);
  c.handle("multi.run_agent", async (params) => ({ result: output(params.spec.name, await answer(params.spec, params.task, params)) }));
  return c;
}

/** Calls a `multi.*` method and asserts the answer has exactly its declared result shape (`@car/client/protocol`). */
async function declared(c: TestClient, method: keyof typeof PROTOCOL & `multi.${string}`, params: unknown): Promise<any> {
  const result = await c.result(method, params);
  expect(compileSchema(PROTOCOL[method].result as unknown as JsonObject)(result), `${method} answered ${JSON.stringify(result).slice(0, 300)}`).toEqual({
    ok: true,
  });
  return result;
}

describe("multi.*", () => {
  it("runs a pipeline whose agents execute on the client through multi.run_agent", async () => {
    const c = await agentClient((spec, task) => `${spec.name}(${task.split("\n")[0]})`);
    const result = await declared(c, "multi.pipeline", { stages: [agent("draft"), agent("edit")], task: "write" });
    expect(result.completed).toBe(true);
    expect(result.stages.map((s: any) => s.name)).toEqual(["draft", "edit"]);
    expect(result.stages[0].answer).toBe("draft(write)");
    expect(result.final_answer).toBe(result.stages[1].answer);
    const calls = c.frames.filter((f) => f.method === "multi.run_agent");
    expect(calls).toHaveLength(2);
    expect(calls[0].params).toMatchObject({ spec: agent("draft"), task: "write", step: expect.any(String), original_task: "write" });
    expect(calls[0].params.request_id).toBe(calls[0].id);
    expect(calls[1].params.inputs).toEqual([{ name: "draft", answer: "draft(write)" }]);

    const events = await c.result("events.query", { kinds: ["multi_run_started", "multi_run_completed"] });
    expect(events.count).toBe(2);
  });

  it("runs swarm, vote, map_reduce and supervisor", async () => {
    let bossCalls = 0;
    const c = await agentClient((spec, task) => {
      if (spec.name === "boss") return ++bossCalls === 1 ? '{"delegate": [{"worker": "w1", "task": "dig"}]}' : '{"final_answer": "boss is done"}';
      if (spec.name === "reducer") return "reduced";
      if (spec.name.startsWith("voter")) return spec.name === "voter3" ? "no" : "Yes";
      return `${spec.name}:${task.length}`;
    });
    const swarm = await declared(c, "multi.swarm", { mode: "parallel", agents: [agent("a"), agent("b")], task: "t" });
    expect(swarm.mode).toBe("parallel");
    expect(swarm.rounds[0].map((o: any) => o.name)).toEqual(["a", "b"]);

    const vote = await declared(c, "multi.vote", { agents: [agent("voter1"), agent("voter2"), agent("voter3")], task: "ok?" });
    expect(vote.winner).toMatchObject({ count: 2 });
    expect(vote.majority).toBe(true);

    const mr = await declared(c, "multi.map_reduce", { mapper: agent("mapper"), reducer: agent("reducer"), items: ["x", "y"], task: "sum" });
    expect(mr.map).toHaveLength(2);
    expect(mr.final_answer).toBe("reduced");

    const sup = await declared(c, "multi.supervisor", { workers: [agent("w1")], supervisor: agent("boss"), task: "plan", max_rounds: 2 });
    expect(sup.rounds.map((r: any) => r.decision)).toEqual(["delegate", "final"]);
    expect(sup).toMatchObject({ completed: true, final_answer: "boss is done" });
    expect(sup.rounds[0].delegations[0]).toMatchObject({ worker: "w1", task: "dig" });
  });

  it("records an agent that answers with a JSON-RPC error or a malformed output as a failed entry", async () => {
    const c = await TestClient.open(fx.server.url, fx.server.token);
    fx.track(c);
    c.handle("multi.run_agent", (params) =>
      params.spec.name === "broken"
        ? { error: { code: -32000, message: "model unavailable" } }
        : { result: { name: params.spec.name, answer: "x", tool_calls: [] } },
    );
    const result = await declared(c, "multi.swarm", { mode: "parallel", agents: [agent("broken"), agent("sloppy")], task: "t" });
    const [broken, sloppy] = result.rounds[0];
    expect(broken.error).toContain("model unavailable");
    expect(typeof sloppy.error).toBe("string");
    expect(result.failed_calls).toBe(2);
  });

  it("bounds an unanswered agent call by agent_timeout_ms", async () => {
    const c = await TestClient.open(fx.server.url, fx.server.token);
    fx.track(c);
    c.handle("multi.run_agent", () => undefined);
    const result = await declared(c, "multi.pipeline", { stages: [agent("mute")], task: "t", agent_timeout_ms: 20 });
    expect(result.completed).toBe(false);
    expect(result.cut_off[0]).toMatchObject({ name: "mute", reason: "timeout" });
  });

  it("refuses malformed specs and unknown modes with -32602 before any agent runs", async () => {
    const c = await agentClient(() => "x");
    const badSpec = await c.call("multi.pipeline", { stages: [{ name: "no-prompt" }], task: "t" });
    expect(badSpec.error?.code).toBe(-32602);
    const badMode = await c.call("multi.swarm", { mode: "hybrid", agents: [agent("a")], task: "t" });
    expect(badMode.error?.code).toBe(-32602);
    expect(badMode.error?.message).toMatch(/hybrid.*not supported/);
    const typo = await c.call("multi.supervisor", { workers: [agent("a")], supervisor: agent("b"), task: "t", max_round: 1 });
    expect(typo.error?.message).toMatch(/unknown param 'max_round'/);
    expect((await c.call("multi.vote", { agents: [agent("a")] })).error?.message).toBe("invalid params: task is required");
    expect(c.frames.some((f) => f.method === "multi.run_agent")).toBe(false);
  });

  it("runs a tournament: a fresh judge per match, byes, and a ranking best to worst", async () => {
    const strength: Record<string, number> = { a: 2, b: 7, c: 4 };
    const c = await agentClient((spec, task) => {
      if (spec.name !== "judge") return String(strength[spec.name]);
      const [x, y] = [...task.matchAll(/^\[(?:A|B)\]\n(.*)$/gm)].map((m) => Number(m[1]));
      return x! >= y! ? '{"winner": "A"}' : '{"winner": "B"}';
    });
    const result = await declared(c, "multi.tournament", { competitors: [agent("a"), agent("b"), agent("c")], judge: agent("judge"), task: "best?" });
    expect(result).toMatchObject({ task: "best?", winner_name: "b", winner_answer: "7", ranking: ["b", "c", "a"] });
    expect(result.candidates.map((o: any) => o.name)).toEqual(["a", "b", "c"]);
    expect(result.matches.map((m: any) => [m.round, m.a, m.b, m.winner])).toEqual([
      [1, "a", "b", "b"],
      [2, "b", "c", "b"],
    ]);
    expect(result.byes).toEqual([{ round: 1, name: "c" }]);
    const judgeCalls = c.frames.filter((f) => f.method === "multi.run_agent" && f.params.spec.name === "judge");
    expect(new Set(judgeCalls.map((f) => f.params.call_id)).size).toBe(2);
  });

  it("runs a subtask: spawns within the main agent's tools run, a grant outside them is rejected before running", async () => {
    let turn = 0;
    const c = await agentClient((spec, task) => {
      if (spec.name !== "lead") return `${spec.name} used ${spec.tools.join("+")} on ${task}`;
      turn++;
      if (turn === 1)
        return JSON.stringify({
          spawn_subtask: [
            { task: "a", tools: ["grep"] },
            { task: "b", tools: ["read_file"] },
          ],
        });
      if (turn === 2) return JSON.stringify({ spawn_subtask: [{ task: "c", tools: ["shell"] }] });
      return JSON.stringify({ final_answer: "all done" });
    });
    const main = { ...agent("lead"), tools: ["grep", "read_file"], max_turns: 4 };
    const result = await declared(c, "multi.subtask", { main, task: "investigate" });
    expect(result).toMatchObject({ task: "investigate", final_answer: "all done", completed: true });
    expect(result.subtasks.map((s: any) => [s.id, s.turn, s.status])).toEqual([
      ["sub-1", 1, "succeeded"],
      ["sub-2", 1, "succeeded"],
      ["sub-3", 2, "rejected"],
    ]);
    expect(result.subtasks[0].output.answer).toBe("lead/sub-1 used grep on a");
    const subSpecs = c.frames.filter((f) => f.method === "multi.run_agent" && f.params.spec.name !== "lead").map((f) => f.params.spec.tools);
    expect(subSpecs).toEqual([["grep"], ["read_file"]]);
    // The main agent's calls carry the spawn_subtask tool, its grant an enum of main's tools.
    const leadCall = c.frames.find((f) => f.method === "multi.run_agent" && f.params.spec.name === "lead");
    expect(leadCall.params.tools[0].parameters.properties.tools.items.enum).toEqual(["grep", "read_file"]);
  });

  it("enforces a token budget from the agents' reported usage and reports the real counts", async () => {
    const c = await TestClient.open(fx.server.url, fx.server.token);
    fx.track(c);
    c.handle("multi.run_agent", (p) => ({ result: { ...output(p.spec.name, "ok"), tokens: { input_tokens: 70, output_tokens: 30, cost_usd: 0.25 } } }));
    const stages = ["s1", "s2", "s3"].map(agent);
    const result = await declared(c, "multi.pipeline", { stages, task: "t", budget: { max_total_tokens: 150 } });
    expect(c.frames.filter((f) => f.method === "multi.run_agent")).toHaveLength(2);
    expect(result.budget_exceeded).toEqual({ limit: "max_total_tokens", threshold: 150, spent: 200 });
    expect(result.cut_off[0]).toMatchObject({ name: "s3", reason: "budget_exceeded" });
    expect(result.stages[2].error).toMatch(/max_total_tokens/);

    const costs = await c.result("events.cost_by_agent", null);
    expect(costs).toEqual([
      { agent: "s1", calls: 1, tokens_in: 70, tokens_out: 30, cost_usd: 0.25 },
      { agent: "s2", calls: 1, tokens_in: 70, tokens_out: 30, cost_usd: 0.25 },
    ]);
    expect(await c.result("metrics.summary", null)).toMatchObject({ tokens_in: 140, tokens_out: 60, cost_usd: 0.5, cumulative_cost_usd: 0.5 });

    for (const budget of [{ max_tool_calls: 1 }, { max_total_tokens: -5 }, { max_cost_usd: "cheap" }]) {
      const refused = await c.call("multi.vote", { agents: [agent("v")], task: "t", budget });
      expect(refused.error?.code).toBe(-32602);
    }
    expect(c.frames.filter((f) => f.method === "multi.run_agent")).toHaveLength(2);
  });

  it("declares closed result shapes: a field the engine does not send, or a wrong enum, fails the declaration", async () => {
    const c = await agentClient((spec) => spec.name);
    const result = await declared(c, "multi.swarm", { mode: "debate", agents: [agent("a"), agent("b")], task: "t", rounds: 2 });
    expect(result.rounds).toHaveLength(2);
    const check = compileSchema(PROTOCOL["multi.swarm"].result as unknown as JsonObject);
    expect(check({ ...result, extra: 1 }).ok).toBe(false);
    expect(check({ ...result, mode: "chaos" }).ok).toBe(false);
    expect(check({ ...result, outputs: [{ ...result.outputs[0], tool_calls: [] }] }).ok).toBe(false);
    const { usage: _usage, ...withoutUsage } = result;
    expect(check(withoutUsage).ok).toBe(false);
  });
});
