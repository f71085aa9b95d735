import { CarError, paramsDigest } from "@car/ir";
import { describe, expect, it } from "vitest";
import { ROLLBACK_WARNING, TerminalToolError, sleep } from "../src/index.ts";
import type { ToolCallContext } from "../src/index.ts";
import { fakeRuntime, tc } from "./helpers.ts";

describe("tool registry", () => {
  it("registers schemas, lists them sorted, unregisters with a count", () => {
    const { rt } = fakeRuntime();
    rt.registerTool({ name: "zeta" });
    rt.registerTool("alpha");
    expect(rt.listTools().map((t) => t.name)).toEqual(["alpha", "zeta"]);
    expect(rt.listTools()[0]).toMatchObject({ source: "user_defined", parameters: {}, idempotent: false });
    expect(rt.unregisterTool("alpha")).toBe(1);
    expect(rt.unregisterTool("alpha")).toBe(0);
    expect(() => rt.registerTool({ name: "bad", parameters: { type: 7 } as never })).toThrow(CarError);
  });
});

describe("admission", () => {
  it("rejects the whole proposal before any dispatch on an unknown tool or a schema mismatch", async () => {
    const { rt } = fakeRuntime();
    const calls: string[] = [];
    rt.registerTool({ name: "read", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }, (p) =>
      calls.push(String(p["path"])),
    );
    const r = await rt.executeProposal({
      actions: [tc("a", "read", { parameters: { path: "/x" } }), tc("b", "read", { parameters: { path: 42 } }), tc("c", "nope")],
    });
    expect(calls).toEqual([]);
    expect(r.results.map((x) => x.status)).toEqual(["rejected", "rejected", "rejected"]);
    expect(r.results[1]!.error).toMatch(/parameters do not match the schema of tool 'read'/);
    expect(r.results[2]!.error).toMatch(/calls tool 'nope', which is not registered/);
    expect(r.cost).toEqual({ tool_calls: 0, actions_executed: 0, actions_rejected: 3, actions_skipped: 0, total_duration_ms: 0, retries: 0 });
  });

  it("rejects a state key that is an output reference before anything runs, so no write lands under a key verify never saw", async () => {
    const { rt } = fakeRuntime();
    const calls: string[] = [];
    rt.registerTool("t", () => {
      calls.push("t");
      return "target";
    });
    const r = await rt.executeProposal({
      actions: [
        tc("t1", "t"),
        { id: "w", type: "state_write", parameters: { key: "$t1.output", value: 1 }, dependencies: ["t1"] },
        { id: "r", type: "state_read", parameters: { keys: ["a", "$t1.output"] }, dependencies: ["t1"] },
        { id: "ok", type: "state_write", parameters: { key: "k", value: "$t1.output" }, dependencies: ["t1"] },
      ],
    });
    expect(calls).toEqual([]);
    expect(r.results.map((x) => x.status)).toEqual(["rejected", "rejected", "rejected", "rejected"]);
    expect(r.results[1]!.error).toMatch(/state_write names the state key '\$t1\.output', an output reference; state keys must be literal/);
    expect(r.results[2]!.error).toMatch(/state_read names the state key '\$t1\.output'/);
    expect(r.results[3]!.error).toMatch(/^not run: the proposal was rejected at admission/);
    expect(rt.state.keys()).toEqual([]);
  });

  it("rejects a state_write or state_read that names no string key before anything runs", async () => {
    const { rt } = fakeRuntime();
    const calls: string[] = [];
    rt.registerTool("t", () => calls.push("t"));
    const r = await rt.executeProposal({
      actions: [tc("a", "t"), { id: "w", type: "state_write", parameters: { value: 1 } }, { id: "r", type: "state_read", parameters: { keys: ["x", 2] } }],
    });
    expect(calls).toEqual([]);
    expect(r.results.map((x) => x.status)).toEqual(["rejected", "rejected", "rejected"]);
    expect(r.results[1]!.error).toMatch(/state_write needs a string 'key'/);
    expect(r.results[2]!.error).toMatch(/state_read needs a string 'key' parameter or a string array 'keys'/);
    expect(rt.state.keys()).toEqual([]);
  });

  it("throws invalid_proposal for duplicate ids, unknown dependencies and cycles", async () => {
    const { rt } = fakeRuntime();
    rt.registerTool("t", () => 1);
    await expect(rt.executeProposal({ actions: [tc("a", "t"), tc("a", "t")] })).rejects.toMatchObject({ code: "invalid_proposal" });
    await expect(rt.executeProposal({ actions: [tc("a", "t", { dependencies: ["b"] }), tc("b", "t", { dependencies: ["a"] })] })).rejects.toMatchObject({
      code: "invalid_proposal",
    });
    await expect(rt.executeProposal("{not json")).rejects.toMatchObject({ code: "invalid_proposal" });
  });

  it("rejects a proposal over its CostBudget at admission, and skips the rest when the run-time budget runs out", async () => {
    const { rt } = fakeRuntime();
    let calls = 0;
    rt.registerTool("t", () => ++calls);
    const over = await rt.executeProposal({ actions: [tc("a", "t"), tc("b", "t")] }, undefined, { budget: { max_actions: 1 } });
    expect(over.cost.actions_rejected).toBe(2);
    expect(over.results[0]!.error).toMatch(/budget exceeded/);
    const { rt: rt2, timers } = fakeRuntime();
    rt2.registerTool("slow", async (_p, ctx) => sleep(timers, 100, ctx.signal));
    const slow = await timers.settle(
      rt2.executeProposal(
        {
          actions: [
            tc("a", "slow"),
            { id: "w", type: "state_write", parameters: { key: "k", value: 1 }, dependencies: ["a"] },
            tc("b", "slow", { dependencies: ["w"] }),
          ],
        },
        undefined,
        { budget: { max_duration_ms: 50 } },
      ),
    );
    expect(over.cost.tool_calls).toBe(0);
    expect(slow.results.map((x) => x.status)).toEqual(["succeeded", "skipped", "skipped"]);
    expect(slow.results[2]!.error).toMatch(/budget exceeded/);
    expect(slow.results[0]!.rolled_back).toBeUndefined();
    expect(slow.cost).toMatchObject({ actions_executed: 1, actions_skipped: 2 });
  });
});

describe("scheduling", () => {
  it("starts an action as soon as its own dependencies finish (no level barrier)", async () => {
    const { rt, timers } = fakeRuntime();
    rt.registerTool("wait", async (p, ctx) => {
      await sleep(timers, p["ms"] as number, ctx.signal);
      return p["ms"];
    });
    const r = timers.settle(
      rt.executeProposal({
        actions: [
          tc("slow", "wait", { parameters: { ms: 1000 } }),
          tc("b", "wait", { parameters: { ms: 10 } }),
          tc("c", "wait", { parameters: { ms: 10 }, dependencies: ["b"] }),
          tc("d", "wait", { parameters: { ms: 10 }, dependencies: ["slow"] }),
        ],
      }),
    );
    const result = await r;
    const order = rt.events.query({ kinds: ["action_succeeded"] }).map((e) => e.action_id);
    expect(order).toEqual(["b", "c", "slow", "d"]);
    expect(result.cost.total_duration_ms).toBe(1010);
  });

  it("honours a concurrency limit", async () => {
    const { rt, timers } = fakeRuntime({ maxConcurrency: 2 });
    let inFlight = 0;
    let peak = 0;
    rt.registerTool("w", async (_p, ctx) => {
      peak = Math.max(peak, ++inFlight);
      await sleep(timers, 5, ctx.signal);
      inFlight--;
    });
    const r = await timers.settle(rt.executeProposal({ actions: Array.from({ length: 7 }, (_, i) => tc(`a${i}`, "w")) }));
    expect(r.cost.actions_executed).toBe(7);
    expect(peak).toBe(2);
  });
});

describe("per-action semantics", () => {
  it("checks preconditions against live state: a failure is a rejection handled per failure_behavior", async () => {
    const { rt } = fakeRuntime();
    rt.registerTool("t", () => "ran");
    const r = await rt.executeProposal({
      actions: [
        { id: "w", type: "state_write", parameters: { key: "ready", value: true } },
        tc("ok", "t", { dependencies: ["w"], preconditions: [{ key: "ready", operator: "eq", value: true }] }),
        tc("no", "t", { failure_behavior: "skip", preconditions: [{ key: "missing", operator: "exists" }] }),
        tc("after", "t", { dependencies: ["no"], failure_behavior: "skip" }),
      ],
    });
    expect(r.results.map((x) => x.status)).toEqual(["succeeded", "succeeded", "rejected", "rejected"]);
    expect(r.results[2]!.error).toMatch(/precondition failed: 'missing' exists/);
    expect(r.results[3]!.error).toMatch(/unsatisfied dependency: 'no' rejected/);
    expect(rt.state.get("ready")).toBe(true);
  });

  it("a policy denial rejects the action and records the violation; retry is treated as abort", async () => {
    const { rt } = fakeRuntime();
    const ran: string[] = [];
    rt.registerTool("shell", (p) => ran.push(String(p["command"])));
    rt.registerPolicy({ name: "no_rm", rule: "deny_tool_param", target: "shell", key: "command", pattern: "rm -rf" });
    const r = await rt.executeProposal({
      actions: [
        { id: "w", type: "state_write", parameters: { key: "x", value: 1 } },
        tc("bad", "shell", { parameters: { command: "rm -rf /" }, failure_behavior: "retry", dependencies: ["w"] }),
        tc("later", "shell", { parameters: { command: "ls" }, dependencies: ["bad"] }),
      ],
    });
    expect(ran).toEqual([]);
    expect(r.results.map((x) => x.status)).toEqual(["succeeded", "rejected", "skipped"]);
    expect(r.results[1]!.error).toMatch(/^denied by policy: no_rm/);
    expect(r.results[0]!.rolled_back).toBe(true);
    expect(r.cost.retries).toBe(0);
    expect(rt.events.query({ kinds: ["policy_violation"] })[0]!.data).toMatchObject({ policy_name: "no_rm" });
    expect(rt.state.exists("x")).toBe(false);
  });

  it("resolves $id.output references, and checks the resolved parameters against the schema", async () => {
    const { rt } = fakeRuntime();
    rt.registerTool("make", () => ({ n: 3, s: "x" }));
    rt.registerTool({ name: "num", parameters: { type: "object", properties: { v: { type: "number" } } } }, (p) => p["v"]);
    const r = await rt.executeProposal({
      actions: [
        tc("m", "make"),
        tc("good", "num", { parameters: { v: "$m.output.n" }, dependencies: ["m"] }),
        tc("bad", "num", { parameters: { v: "$m.output.s" }, dependencies: ["m"], failure_behavior: "skip" }),
      ],
    });
    expect(r.results[1]).toMatchObject({ status: "succeeded", output: 3 });
    expect(r.results[2]!.status).toBe("rejected");
    expect(r.results[2]!.error).toMatch(/schema of tool 'num'/);
  });

  it("shares a referenced output with every consumer, and caps the bytes a proposal's references interpolate", async () => {
    const { rt } = fakeRuntime({ maxInterpolatedBytes: 5_000_000 });
    const big = { blob: "x".repeat(1_400_000) };
    const seen: unknown[] = [];
    rt.registerTool("make", () => big);
    rt.registerTool("use", (p) => {
      seen.push(p["v"]);
      return Array.isArray(p["v"]) ? p["v"].length : 1;
    });
    const refs = (n: number) => Array(n).fill("$m.output");
    const ok = await rt.executeProposal({ actions: [tc("m", "make"), tc("u", "use", { parameters: { v: refs(3) }, dependencies: ["m"] })] });
    expect(ok.results.map((r) => r.status)).toEqual(["succeeded", "succeeded"]);
    const shared = seen[0] as unknown[];
    expect(shared[0]).toBe(shared[1]);
    expect(Object.isFrozen(shared[0])).toBe(true);
    // 400 references to a 1.4 MB output: the consuming action is rejected with budget_exceeded, nothing aborts the process.
    const over = await rt.executeProposal({
      actions: [
        tc("m", "make"),
        tc("a", "use", { parameters: { v: refs(2) }, dependencies: ["m"] }),
        tc("b", "use", { parameters: { v: refs(400) }, dependencies: ["m"] }),
      ],
    });
    expect(over.results.map((r) => r.status)).toEqual(["succeeded", "succeeded", "rejected"]);
    expect(over.results[2]!.error).toMatch(/over the 5000000-byte limit/);
    expect(seen).toHaveLength(2);
  });

  it("times out through the AbortSignal and discards a late result", async () => {
    const { rt, timers } = fakeRuntime();
    let signal: AbortSignal | undefined;
    let late: (v: unknown) => void = () => {};
    rt.registerTool("hang", (_p, ctx: ToolCallContext) => {
      signal = ctx.signal;
      return new Promise((resolve) => {
        late = resolve;
      });
    });
    const r = await timers.settle(rt.executeProposal({ actions: [tc("h", "hang", { timeout_ms: 50, expected_effects: { done: true } })] }));
    expect(r.results[0]).toMatchObject({ status: "failed", error: "timed out after 50 ms" });
    expect(signal?.aborted).toBe(true);
    expect((signal!.reason as CarError).code).toBe("timeout");
    late({ too: "late" });
    await new Promise((res) => setImmediate(res));
    expect(rt.state.exists("done")).toBe(false);
    expect(rt.events.query({ kinds: ["action_failed"] })[0]!.data["error_class"]).toBe("timeout");
    expect(timers.pending()).toBe(0);
  });

  it("retries 1 + max_retries times with 100 ms × 2ⁿ backoff, counting retries", async () => {
    const { rt, timers } = fakeRuntime();
    const attempts: [number, number][] = [];
    rt.registerTool("flaky", (_p, ctx) => {
      attempts.push([ctx.attempt, timers.now()]);
      if (ctx.attempt < 3) throw new Error("try again");
      return "ok";
    });
    const t0 = timers.now();
    const r = await timers.settle(rt.executeProposal({ actions: [tc("f", "flaky", { failure_behavior: "retry", max_retries: 3 })] }));
    expect(r.results[0]).toMatchObject({ status: "succeeded", output: "ok" });
    expect(attempts.map(([a, t]) => [a, t - t0])).toEqual([
      [1, 0],
      [2, 100],
      [3, 300],
    ]);
    expect(r.cost).toMatchObject({ tool_calls: 3, retries: 2, actions_executed: 1 });
    const exhausted = await timers.settle(rt.executeProposal({ actions: [tc("g", "flaky", { failure_behavior: "retry", max_retries: 1 })] }));
    expect(exhausted.results[0]!.status).toBe("failed");
    expect(exhausted.cost).toMatchObject({ tool_calls: 2, retries: 1 });
  });

  it("does not count a retry that the tool-call budget stopped before dispatch", async () => {
    const { rt, timers } = fakeRuntime();
    rt.registerTool("down", () => {
      throw new Error("still down");
    });
    const r = await timers.settle(
      rt.executeProposal({ actions: [tc("d", "down", { failure_behavior: "retry", max_retries: 5 })] }, undefined, { budget: { max_tool_calls: 2 } }),
    );
    expect(r.results[0]).toMatchObject({ status: "failed" });
    expect(r.results[0]!.error).toContain("budget exceeded");
    expect(r.cost).toMatchObject({ tool_calls: 2, retries: 1 });
  });

  it("a terminal failure aborts after one attempt whatever the failure_behavior, and rolls back", async () => {
    const { rt, timers } = fakeRuntime();
    let calls = 0;
    rt.registerTool("ok", () => "fine");
    rt.registerTool("fatal", () => {
      calls++;
      throw new TerminalToolError("disk gone");
    });
    const r = await timers.settle(
      rt.executeProposal({
        actions: [
          tc("a", "ok", { expected_effects: { a: 1 } }),
          tc("b", "fatal", { failure_behavior: "retry", dependencies: ["a"] }),
          tc("c", "ok", { dependencies: ["b"] }),
        ],
      }),
    );
    expect(calls).toBe(1);
    expect(r.results[0]).toEqual({
      action_id: "a",
      status: "succeeded",
      rolled_back: true,
      output: "fine",
      error: ROLLBACK_WARNING,
      state_changes: {},
      duration_ms: 0,
      timestamp: expect.any(String),
    });
    expect(r.results[1]).toMatchObject({ status: "failed", terminal: true, error: "disk gone" });
    expect(r.results[2]).toMatchObject({ status: "skipped" });
    expect(r.results[2]!.terminal).toBeUndefined();
    expect(r.cost).toMatchObject({ actions_executed: 2, actions_skipped: 1, retries: 0 });
    expect(rt.state.keys()).toEqual([]);
    expect(rt.events.query({ kinds: ["proposal_rolled_back"] })).toHaveLength(1);
  });

  it("skip continues with the rest; dependents of the skipped action are rejected", async () => {
    const { rt } = fakeRuntime();
    rt.registerTool("boom", () => {
      throw new Error("nope");
    });
    rt.registerTool("ok", () => 1);
    const r = await rt.executeProposal({
      actions: [
        tc("a", "boom", { failure_behavior: "skip" }),
        tc("b", "ok", { expected_effects: { b: 1 } }),
        tc("c", "ok", { dependencies: ["a"], failure_behavior: "skip" }),
      ],
    });
    // DECISIONS §14: the failed skip action ends `skipped` with its error kept, counted by its final status.
    expect(r.results.map((x) => x.status)).toEqual(["skipped", "succeeded", "rejected"]);
    expect(r.results[0]!.error).toBe("nope");
    expect(rt.state.get("b")).toBe(1);
    expect(r.cost).toMatchObject({ tool_calls: 2, actions_executed: 1, actions_rejected: 1, actions_skipped: 1 });
    expect(rt.events.query({ kinds: ["action_failed"], action_id: "a" })[0]!.data).toMatchObject({ skipped: true, error: "nope" });
  });

  it("serves idempotent calls from the idempotency cache and honours cache_ttl_secs", async () => {
    const { rt, timers } = fakeRuntime();
    let n = 0;
    rt.registerTool("count", () => ++n);
    rt.registerTool({ name: "ttl", cache_ttl_secs: 60 }, () => ++n);
    const first = await rt.executeProposal({ actions: [tc("a", "count", { idempotent: true, parameters: { x: 1, y: 2 } })] });
    const again = await rt.executeProposal({ actions: [tc("a", "count", { idempotent: true, parameters: { y: 2, x: 1 } })] });
    expect(first.results[0]!.output).toBe(1);
    expect(again.results[0]!.output).toBe(1);
    expect(again.cost.tool_calls).toBe(0);
    expect(rt.events.query({ kinds: ["action_succeeded"] }).at(-1)!.data["cached"]).toBe(true);
    await rt.executeProposal({ actions: [tc("t", "ttl")] });
    const cached = await rt.executeProposal({ actions: [tc("t", "ttl")] });
    timers.advance(60_001);
    const fresh = await rt.executeProposal({ actions: [tc("t", "ttl")] });
    expect([cached.results[0]!.output, fresh.results[0]!.output]).toEqual([2, 3]);
  });

  it("paces calls by the tool's rate limit on the injected timers", async () => {
    const { rt, timers } = fakeRuntime();
    const at: number[] = [];
    const t0 = timers.now();
    rt.registerTool({ name: "api", rate_limit: { max_calls: 2, interval_secs: 1 } }, () => at.push(timers.now() - t0));
    const r = await timers.settle(rt.executeProposal({ actions: [tc("a", "api"), tc("b", "api"), tc("c", "api")] }));
    expect(r.cost.tool_calls).toBe(3);
    expect(at).toEqual([0, 0, 1000]);
  });

  it("validates outputs against `returns`: a mismatch is a validation failure", async () => {
    const { rt } = fakeRuntime();
    rt.registerTool({ name: "r", returns: { type: "object", required: ["ok"] } }, () => ({ nope: 1 }));
    const r = await rt.executeProposal({ actions: [tc("a", "r")] });
    expect(r.results[0]!.status).toBe("failed");
    expect(rt.events.query({ kinds: ["action_failed"] })[0]!.data).toMatchObject({ error_class: "validation" });
  });

  it("applies state_write, state_read and assertion semantics with versioned, attributed changes", async () => {
    const { rt } = fakeRuntime();
    rt.state.set("count", 1);
    const r = await rt.executeProposal({
      id: "p1",
      actions: [
        { id: "w", type: "state_write", parameters: { key: "count", value: 2 }, expected_effects: { count: 2, other: "x" } },
        { id: "r", type: "state_read", parameters: { key: "count" }, dependencies: ["w"] },
        { id: "ok", type: "assertion", preconditions: [{ key: "count", operator: "gte", value: 2 }], dependencies: ["w"] },
        { id: "bad", type: "assertion", preconditions: [{ key: "count", operator: "gt", value: 5 }], dependencies: ["w"], failure_behavior: "skip" },
      ],
    });
    expect(r.results.map((x) => x.status)).toEqual(["succeeded", "succeeded", "succeeded", "failed"]);
    expect(r.results[0]!.state_changes).toEqual({ count: { op: "set", value: 2 }, other: { op: "set", value: "x" } });
    expect(r.results[1]!.output).toBe(2);
    expect(r.results[3]!.error).toMatch(/assertion failed/);
    expect(rt.events.query({ kinds: ["action_failed"] })[0]!.data["error_class"]).toBe("unknown");
    expect(rt.state.version("count")).toBe(2);
    expect(rt.state.transitions({ key: "count" }).at(-1)).toMatchObject({ proposal_id: "p1", action_id: "w", version: 2 });
  });
});

describe("events", () => {
  it("records the lifecycle with params_digest and expected_effects; raw parameters only in proposal_received", async () => {
    const { rt } = fakeRuntime();
    rt.registerTool("t", (p) => {
      if (p["fail"] === true) throw new Error("rejected by policy: host guard");
      return 1;
    });
    await rt.executeProposal({
      id: "p",
      actions: [
        tc("a", "t", { parameters: { secret: "s3", fail: false }, expected_effects: { k: 1 } }),
        tc("b", "t", { parameters: { fail: true }, failure_behavior: "skip" }),
      ],
    });
    const kinds = rt.events.query({ proposal_id: "p" }).map((e) => e.kind);
    expect(kinds[0]).toBe("proposal_received");
    expect(kinds.at(-1)).toBe("proposal_completed");
    expect(kinds).toEqual(expect.arrayContaining(["action_validated", "action_started", "action_succeeded", "action_failed", "state_changed"]));
    const ok = rt.events.query({ kinds: ["action_succeeded"], action_id: "a" })[0]!;
    expect(ok.data).toMatchObject({
      params_digest: paramsDigest({ secret: "s3", fail: false }),
      expected_effects: { k: 1 },
      tool: "t",
      tool_source: "user_defined",
    });
    const failed = rt.events.query({ kinds: ["action_failed"] })[0]!;
    expect(failed.data).toMatchObject({ error_class: "rejected_by_policy", params_digest: paramsDigest({ fail: true }), expected_effects: {} });
    const withSecret = rt.events.query().filter((e) => JSON.stringify(e).includes("s3"));
    expect(withSecret.map((e) => e.kind)).toEqual(["proposal_received"]);
  });

  it("action_succeeded data is what each action alone would give, however calls of one tool share it", async () => {
    const { rt } = fakeRuntime();
    rt.registerTool("t", async () => ({ ok: true }));
    rt.registerTool("u", () => 1);
    const actions = [
      tc("a", "t"),
      tc("b", "t"),
      tc("c", "t", { parameters: { x: 1 } }),
      tc("d", "t", { parameters: { x: 1 } }),
      tc("e", "t", { expected_effects: { k: 1 } }),
      tc("f", "t"),
      tc("g", "u"),
      tc("h", "t", { parameters: { x: 2 } }),
    ];
    await rt.executeProposal({ id: "p", actions });
    const run_id = rt.events.query({ kinds: ["proposal_received"] })[0]!.data["run_id"];
    // In declaration order (a synchronous tool finishes before the asynchronous ones started earlier).
    const succeeded = actions.map((a) => rt.events.query({ kinds: ["action_succeeded"], action_id: a.id! })[0]!);
    for (const [i, e] of succeeded.entries()) {
      const action = actions[i]!;
      const plain = {
        params_digest: paramsDigest(action.parameters ?? {}),
        expected_effects: action.expected_effects ?? {},
        tool: action.tool,
        tool_source: "user_defined",
        run_id,
      };
      expect(JSON.parse(JSON.stringify(e.data))).toEqual(plain);
    }
    // Shared only between equal ones, and never open to change through one event.
    expect(succeeded[1]!.data).toBe(succeeded[0]!.data);
    expect(succeeded[2]!.data).not.toBe(succeeded[0]!.data);
    expect(Object.isFrozen(succeeded[0]!.data)).toBe(true);
  });

  it("a tool registered again mid-run with another source is recorded with its new source", async () => {
    const { rt } = fakeRuntime();
    rt.registerTool("t", () => 1);
    rt.registerTool("swap", () => {
      rt.registerTool({ name: "t", source: "mcp" }, () => 2);
      return null;
    });
    await rt.executeProposal({ id: "p", actions: [tc("a", "t"), tc("s", "swap", { dependencies: ["a"] }), tc("b", "t", { dependencies: ["s"] })] });
    const sources = rt.events.query({ kinds: ["action_succeeded"] }).map((e) => [e.action_id, e.data["tool_source"]]);
    expect(sources).toEqual([
      ["a", "user_defined"],
      ["s", "user_defined"],
      ["b", "mcp"],
    ]);
  });
});
