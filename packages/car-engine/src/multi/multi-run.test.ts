import { isCarError, sequentialIds } from "@car/ir";
import { describe, expect, it } from "vitest";
import { fakeEnv, output, scripted, slow, spec } from "../../test/multi/agents.ts";
import { Runtime, manualTimers } from "../index.ts";
import { MULTI_EVENT_KINDS, runPipeline, runSwarm } from "./index.ts";

const names = (n: number): string[] => Array.from({ length: n }, (_, i) => String.fromCharCode(97 + i));

describe("agent output validation", () => {
  it("turns every malformed, throwing or failing agent into an error entry and keeps the others", async () => {
    const { options, events } = fakeEnv();
    const agent = scripted({
      missing: () => ({ name: "missing", answer: "x", turns: 1, tool_calls: 0, duration_ms: 1 }) as never,
      list: () => ({ ...output("list", "x"), tool_calls: [] }) as never,
      renamed: () => output("someone-else", "x"),
      text: () => JSON.stringify(output("text", "from JSON text")),
      badtext: () => "{not json",
      throws: () => {
        throw new Error("boom");
      },
      rejects: () => Promise.reject(new Error("async boom")),
      reports: () => output("reports", "", "rate limited upstream"),
      ok: () => output("ok", "fine"),
    });
    const all = ["missing", "list", "renamed", "text", "badtext", "throws", "rejects", "reports", "ok"];
    const result = await runSwarm(
      "parallel",
      all.map((n) => spec(n)),
      "task",
      agent,
      options,
    );

    const byName = new Map(result.outputs.map((o) => [o.name, o]));
    expect(result.outputs.map((o) => o.name)).toEqual(all);
    expect(byName.get("missing")!.error).toMatch(/invalid agent output.*error/);
    expect(byName.get("list")!.error).toMatch(/tool_calls/);
    expect(byName.get("renamed")!.error).toMatch(/names 'someone-else'/);
    expect(byName.get("text")).toEqual({ ...output("text", "from JSON text") });
    expect(byName.get("badtext")!.error).toMatch(/invalid agent output/);
    expect(byName.get("throws")!.error).toBe("agent threw: boom");
    expect(byName.get("rejects")!.error).toBe("agent threw: async boom");
    expect(byName.get("reports")!.error).toBe("rate limited upstream");
    expect(byName.get("ok")!.error).toBeNull();
    expect(result.failed_calls).toBe(7);
    expect(result.agent_calls).toBe(9);
    expect(result.cut_off).toEqual([]);

    const failed = events.query({ kinds: [MULTI_EVENT_KINDS.agentFailed] }).map((e) => [e.data["agent"], e.data["reason"]]);
    // Events follow completion order; compare as a set.
    expect(failed.sort()).toEqual([
      ["badtext", "invalid_output"],
      ["list", "invalid_output"],
      ["missing", "invalid_output"],
      ["rejects", "threw"],
      ["renamed", "invalid_output"],
      ["reports", "reported"],
      ["throws", "threw"],
    ]);
  });

  it("survives a callback that throws synchronously", async () => {
    const { options } = fakeEnv();
    const agent = (): never => {
      throw new TypeError("sync boom");
    };
    const result = await runPipeline([spec("a")], "t", agent, options);
    expect(result.stages[0]!.error).toBe("agent threw: sync boom");
    expect(result.final_answer).toBeNull();
  });

  it("gives the callback a private copy of the spec", async () => {
    const { options } = fakeEnv();
    const original = spec("a");
    const agent = scripted({
      a: (_t, _c, s) => {
        s.tools.push("mutated");
        return output("a", "ok");
      },
    });
    await runPipeline([original, original], "t", agent, options);
    expect(original.tools).toEqual([]);
  });

  it("refuses bad specs and options before any agent runs", async () => {
    const { options, events } = fakeEnv();
    const agent = scripted();
    const bad = { name: "x", system_prompt: "", tools: [], max_turns: 1 };
    await expect(runPipeline([spec("a"), bad as never], "t", agent, options)).rejects.toSatisfy(
      (e) => isCarError(e, "invalid_params") && /stages\[1\]/.test((e as Error).message),
    );
    await expect(runPipeline([spec("a")], "t", agent, { ...options, maxConcurrency: -1 })).rejects.toSatisfy((e) => isCarError(e, "invalid_params"));
    await expect(runPipeline([spec("a")], "t", "nope" as never, options)).rejects.toSatisfy((e) => isCarError(e, "invalid_params"));
    await expect(runSwarm("hybrid" as never, [spec("a")], "t", agent, options)).rejects.toSatisfy((e) => isCarError(e, "invalid_params"));
    expect(agent.calls).toEqual([]);
    expect(events.count()).toBe(0);
  });
});

describe("limits", () => {
  it("never runs more agents at once than maxConcurrency, in submission order", async () => {
    const { options, timers } = fakeEnv({ maxConcurrency: 2 });
    const ids = names(6);
    const durations = [30, 10, 20, 5, 40, 15];
    const agent = scripted(Object.fromEntries(ids.map((n, i) => [n, slow(timers, durations[i]!, `answer ${n}`)])));
    const result = await timers.settle(
      runSwarm(
        "parallel",
        ids.map((n) => spec(n)),
        "t",
        agent,
        options,
      ),
    );
    expect(agent.maxInFlight).toBe(2);
    expect(agent.calls.map((c) => c.name)).toEqual(ids);
    expect(result.outputs.map((o) => o.answer)).toEqual(ids.map((n) => `answer ${n}`));
    expect(timers.pending()).toBe(0);
  });

  it("runs everything at once without a limit", async () => {
    const { options, timers } = fakeEnv();
    const ids = names(5);
    const agent = scripted(Object.fromEntries(ids.map((n) => [n, slow(timers, 10, n)])));
    await timers.settle(
      runSwarm(
        "parallel",
        ids.map((n) => spec(n)),
        "t",
        agent,
        options,
      ),
    );
    expect(agent.maxInFlight).toBe(5);
  });

  it("aborts an agent at its timeout, reports it cut off and frees its slot", async () => {
    const { options, timers, events } = fakeEnv({ agentTimeoutMs: 50, maxConcurrency: 1 });
    let signal: AbortSignal | undefined;
    const agent = scripted({
      stuck: (task, ctx, s) => {
        signal = ctx.signal;
        return slow(timers, 1_000, "too late")(task, ctx, s);
      },
      quick: slow(timers, 10, "quick answer"),
    });
    const result = await timers.settle(runSwarm("parallel", [spec("stuck"), spec("quick")], "t", agent, options));
    expect(result.outputs[0]!.error).toBe("timed out after 50 ms");
    expect(result.outputs[0]!.duration_ms).toBe(50);
    expect(result.outputs[1]!.answer).toBe("quick answer");
    expect(signal!.aborted).toBe(true);
    expect(isCarError(signal!.reason, "timeout")).toBe(true);
    expect(agent.calls[0]!.ctx.timeout_ms).toBe(50);
    expect(result.cut_off).toEqual([{ name: "stuck", step: "round 1", call_id: "call-1", reason: "timeout", detail: "timed out after 50 ms" }]);
    expect(events.query({ kinds: [MULTI_EVENT_KINDS.agentFailed] })[0]!.data["reason"]).toBe("timeout");
    expect(timers.pending()).toBe(0);
  });

  it("starts no more agents than budget.max_agents and reports the rest", async () => {
    const { options, events } = fakeEnv({ budget: { max_agents: 3 } });
    const ids = names(5);
    const agent = scripted();
    const result = await runSwarm(
      "parallel",
      ids.map((n) => spec(n)),
      "t",
      agent,
      options,
    );
    expect(agent.calls.map((c) => c.name)).toEqual(["a", "b", "c"]);
    expect(result.agent_calls).toBe(3);
    expect(result.outputs.map((o) => o.error === null)).toEqual([true, true, true, false, false]);
    expect(result.outputs[3]!.error).toBe("not started: the run's budget of 3 agent calls is spent");
    expect(result.cut_off.map((c) => [c.name, c.reason])).toEqual([
      ["d", "max_agents"],
      ["e", "max_agents"],
    ]);
    expect(events.count({ kinds: [MULTI_EVENT_KINDS.agentSkipped] })).toBe(2);
  });

  it("stops at the duration budget: the agent in flight is aborted, later ones are not started", async () => {
    const { options, timers } = fakeEnv({ budget: { max_duration_ms: 100 } });
    const ids = names(4);
    const agent = scripted(Object.fromEntries(ids.map((n) => [n, slow(timers, 40, `answer ${n}`)])));
    const result = await timers.settle(
      runSwarm(
        "sequential",
        ids.map((n) => spec(n)),
        "t",
        agent,
        options,
      ),
    );
    expect(result.outputs.map((o) => o.error)).toEqual([
      null,
      null,
      "the run's duration budget of 100 ms is spent",
      "not started: the run's duration budget of 100 ms is spent",
    ]);
    expect(result.cut_off.map((c) => [c.name, c.reason, c.call_id])).toEqual([
      ["c", "max_duration", "call-3"],
      ["d", "max_duration", undefined],
    ]);
    expect(isCarError(agent.calls[2]!.ctx.signal.reason, "budget_exceeded")).toBe(true);
    expect(result.final_answer).toBe("answer b");
    expect(result.duration_ms).toBe(100);
    expect(timers.pending()).toBe(0);
  });

  it("clears the duration timer when the run ends early", async () => {
    const { options, timers } = fakeEnv({ budget: { max_duration_ms: 10_000 }, agentTimeoutMs: 5_000 });
    await runPipeline([spec("a"), spec("b")], "t", scripted(), options);
    expect(timers.pending()).toBe(0);
  });

  it("cancels the run when the caller's signal aborts", async () => {
    const controller = new AbortController();
    const { options, timers } = fakeEnv({ signal: controller.signal });
    const agent = scripted({
      a: slow(timers, 10, "first"),
      b: async (task, ctx, s) => {
        controller.abort();
        return slow(timers, 10, "never")(task, ctx, s);
      },
      c: slow(timers, 10, "never"),
    });
    const result = await timers.settle(runPipeline([spec("a"), spec("b"), spec("c")], "t", agent, options));
    expect(result.stages.map((s) => s.error)).toEqual([null, "the caller cancelled the run", "not started: stage 2 (b) did not produce an answer"]);
    expect(result.cut_off.map((c) => [c.name, c.reason])).toEqual([
      ["b", "cancelled"],
      ["c", "upstream_failed"],
    ]);
    expect(agent.calls.map((c) => c.name)).toEqual(["a", "b"]);
  });

  it("does not start at all under an already-aborted signal", async () => {
    const { options } = fakeEnv({ signal: AbortSignal.abort() });
    const agent = scripted();
    const result = await runSwarm("parallel", [spec("a"), spec("b")], "t", agent, options);
    expect(agent.calls).toEqual([]);
    expect(result.cut_off.map((c) => c.reason)).toEqual(["cancelled", "cancelled"]);
  });
});

describe("audit events", () => {
  it("writes the run to the runtime's event log under one run id", async () => {
    const timers = manualTimers(1_700_000_000_000);
    const rt = new Runtime({ clock: timers, timers, ids: sequentialIds("r") });
    const agent = scripted({ b: () => output("b", "", "failed on purpose") });
    const result = await runPipeline([spec("a"), spec("b")], "task", agent, { runtime: rt });
    expect(result.run_id).toBe("r1");
    const log = rt.events.query({ proposal_id: "r1" });
    expect(log.map((e) => [e.kind, e.action_id ?? null])).toEqual([
      ["multi_run_started", null],
      ["agent_started", "call-1"],
      ["agent_finished", "call-1"],
      ["agent_started", "call-2"],
      ["agent_failed", "call-2"],
      ["multi_run_completed", null],
    ]);
    expect(log[0]!.data).toMatchObject({ pattern: "pipeline", task: "task", agents: ["a", "b"] });
    expect(log[2]!.data).toMatchObject({ agent: "a", step: "stage 1", answer: "a: task" });
    expect(log[4]!.data).toMatchObject({ agent: "b", reason: "reported", error: "failed on purpose" });
    expect(log[5]!.data).toMatchObject({ agent_calls: 2, failed_calls: 1, has_answer: false });
    expect(log[0]!.timestamp).toBe(new Date(1_700_000_000_000).toISOString());
  });

  it("passes the run and call ids to the callback", async () => {
    const { options } = fakeEnv();
    const agent = scripted();
    const result = await runPipeline([spec("a"), spec("b")], "t", agent, options);
    expect(agent.calls.map((c) => [c.ctx.run_id, c.ctx.call_id, c.ctx.step, c.ctx.original_task])).toEqual([
      [result.run_id, "call-1", "stage 1", "t"],
      [result.run_id, "call-2", "stage 2", "t"],
    ]);
  });
});
