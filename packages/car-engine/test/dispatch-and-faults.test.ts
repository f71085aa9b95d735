import type { ActionInput } from "@car/ir";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TerminalToolError, sleep } from "../src/index.ts";
import type { ToolCallback } from "../src/index.ts";
import { fakeRuntime, tc } from "./helpers.ts";

describe("single-callback dispatch contract", () => {
  it("sends ONE JSON string and reads a JSON string back; {error} fails, {error, terminal} is terminal, non-JSON is validation", async () => {
    const { rt, timers } = fakeRuntime();
    for (const name of ["echo", "err", "fatal", "garbage"]) rt.registerTool(name);
    const calls: Record<string, unknown>[] = [];
    const dispatch: ToolCallback = async (callJson) => {
      const call = JSON.parse(callJson) as { tool: string; params: unknown };
      calls.push(call);
      if (call.tool === "echo") return JSON.stringify({ got: call.params });
      if (call.tool === "err") return JSON.stringify({ error: "not today" });
      if (call.tool === "fatal") return JSON.stringify({ error: "broken", terminal: true });
      return "<html>";
    };
    const ok = await rt.executeProposal({ actions: [tc("a", "echo", { parameters: { q: 1 }, timeout_ms: 500 })] }, dispatch, { session_id: "s1" });
    expect(ok.results[0]!.output).toEqual({ got: { q: 1 } });
    expect(calls[0]).toEqual({ tool: "echo", params: { q: 1 }, action_id: "a", request_id: expect.any(String), timeout_ms: 500, session_id: "s1", attempt: 1 });
    const err = await rt.executeProposal(
      { actions: [tc("b", "err", { failure_behavior: "skip" }), tc("c", "garbage", { failure_behavior: "skip" })] },
      dispatch,
    );
    expect(err.results.map((r) => [r.status, r.error])).toEqual([
      ["skipped", "not today"],
      ["skipped", expect.stringMatching(/not JSON/)],
    ]);
    expect(err.cost).toMatchObject({ tool_calls: 2, actions_executed: 0, actions_skipped: 2 });
    expect(rt.events.query({ kinds: ["action_failed"] }).map((e) => e.data["error_class"])).toEqual(["tool_error", "validation"]);
    const fatal = await timers.settle(rt.executeProposal({ actions: [tc("d", "fatal", { failure_behavior: "retry" })] }, dispatch));
    expect(fatal.results[0]).toMatchObject({ status: "failed", terminal: true });
    expect(fatal.cost.tool_calls).toBe(1);
  });

  it("aborts the callback's signal when the call times out, so a transport can forward the cancellation", async () => {
    const { rt, timers } = fakeRuntime();
    rt.registerTool("remote");
    const cancelled: string[] = [];
    const dispatch: ToolCallback = (callJson, signal) =>
      new Promise((_resolve, reject) => {
        signal.addEventListener("abort", () => {
          cancelled.push((JSON.parse(callJson) as { request_id: string }).request_id);
          reject(new Error("cancelled by host"));
        });
      });
    const r = await timers.settle(rt.executeProposal({ actions: [tc("a", "remote", { timeout_ms: 30 })] }, dispatch));
    expect(r.results[0]!.error).toBe("timed out after 30 ms");
    expect(cancelled).toHaveLength(1);
  });
});

describe("fault matrix", () => {
  const cases: [string, () => unknown, RegExp, string][] = [
    [
      "throws",
      () => {
        throw new Error("sync boom");
      },
      /sync boom/,
      "tool_error",
    ],
    ["rejects", () => Promise.reject(new Error("async boom")), /async boom/, "tool_error"],
    ["rejects with a non-Error", () => Promise.reject({ weird: true }), /weird/, "tool_error"],
    ["hangs past its timeout", () => new Promise(() => {}), /timed out after 20 ms/, "timeout"],
    ["returns a non-JSON value", () => 10n, /not valid JSON/, "validation"],
    [
      "returns a cyclic object",
      () => {
        const o: Record<string, unknown> = {};
        o["self"] = o;
        return o;
      },
      /not valid JSON/,
      "validation",
    ],
    ["returns 10 MB", () => "x".repeat(10 * 1024 * 1024), /over the 8388608-byte limit/, "validation"],
  ];
  for (const [name, handler, message, errorClass] of cases) {
    it(`a tool that ${name} fails its action cleanly and the proposal rolls back`, async () => {
      const { rt, timers } = fakeRuntime();
      rt.registerTool("ok", () => 1);
      rt.registerTool("bad", handler);
      rt.state.set("keep", "me");
      const r = await timers.settle(
        rt.executeProposal({ actions: [tc("a", "ok", { expected_effects: { keep: "changed" } }), tc("b", "bad", { timeout_ms: 20, dependencies: ["a"] })] }),
      );
      expect(r.results[1]!.status).toBe("failed");
      expect(r.results[1]!.error).toMatch(message);
      expect(r.results[0]!.rolled_back).toBe(true);
      expect(rt.state.snapshot()).toEqual({ keep: "me" });
      expect(rt.events.query({ kinds: ["action_failed"] })[0]!.data["error_class"]).toBe(errorClass);
      expect(timers.pending()).toBe(0);
    });
  }

  it("accepts a 10 MB result when the output limit allows it", async () => {
    const { rt } = fakeRuntime({ maxOutputBytes: 16 * 1024 * 1024 });
    rt.registerTool("big", () => ({ blob: "x".repeat(10 * 1024 * 1024) }));
    const r = await rt.executeProposal({ actions: [tc("a", "big")] });
    expect((r.results[0]!.output as { blob: string }).blob.length).toBe(10 * 1024 * 1024);
  });

  it("a tool that settles after being cancelled changes nothing", async () => {
    const { rt, timers } = fakeRuntime();
    const settleLate: (() => void)[] = [];
    rt.registerTool("late", (_p, ctx) => new Promise((resolve) => settleLate.push(() => resolve({ late: ctx.signal.aborted }))));
    rt.registerTool("fail", async () => {
      await sleep(timers, 5);
      throw new TerminalToolError("stop everything");
    });
    const r = await timers.settle(rt.executeProposal({ actions: [tc("slow", "late", { expected_effects: { slow: true } }), tc("f", "fail")] }));
    expect(r.results[0]).toMatchObject({ status: "failed", error: expect.stringMatching(/^cancelled/) });
    for (const settle of settleLate) settle();
    await new Promise((res) => setImmediate(res));
    expect(rt.state.keys()).toEqual([]);
    expect(r.results[0]!.output).toBeNull();
  });

  it("runs 10k-action proposals: fan-out and chain", async () => {
    const { rt } = fakeRuntime();
    rt.registerTool("noop", () => null);
    const fan = await rt.executeProposal({ actions: Array.from({ length: 10_000 }, (_, i) => tc(`a${i}`, "noop")) });
    expect(fan.cost.actions_executed).toBe(10_000);
    const chain = await rt.executeProposal({
      actions: Array.from({ length: 10_000 }, (_, i) => tc(`a${i}`, "noop", i === 0 ? {} : { dependencies: [`a${i - 1}`], expected_effects: { last: i } })),
    });
    expect(chain.cost.actions_executed).toBe(10_000);
    expect(rt.state.get("last")).toBe(9_999);
  });
});

describe("rollback property", () => {
  it("for any proposal and any injected failure, an abort leaves the state deep-equal to the initial state", async () => {
    const key = fc.constantFrom("a", "b", "c", "__proto__", "constructor");
    const value = fc.oneof(fc.integer(), fc.string(), fc.constant(null), fc.array(fc.integer(), { maxLength: 3 }));
    const step = fc.record({
      kind: fc.constantFrom("write", "call", "read"),
      key,
      value,
      dependsOnPrevious: fc.boolean(),
      async: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(key, value),
        fc.array(step, { minLength: 1, maxLength: 8 }),
        fc.nat(),
        fc.constantFrom("throw", "terminal", "timeout", "policy", "assertion"),
        async (initial, steps, at, fault) => {
          const { rt, timers } = fakeRuntime();
          for (const k of Object.keys(initial)) rt.state.set(k, initial[k]!);
          const before = rt.state.snapshot();
          rt.registerTool("t", async (p, ctx) => {
            if (p["async"] === true) await sleep(timers, 1, ctx.signal);
            return p;
          });
          rt.registerTool("broken", () => {
            if (fault === "terminal") throw new TerminalToolError("fatal");
            if (fault === "timeout") return new Promise(() => {});
            throw new Error("ordinary");
          });
          rt.registerPolicy({ name: "deny_forbidden", rule: "deny_tool", target: "forbidden" });
          rt.registerTool("forbidden", () => 1);
          const actions: ActionInput[] = steps.map((s, i) => {
            const deps = s.dependsOnPrevious && i > 0 ? [`s${i - 1}`] : [];
            if (s.kind === "write") return { id: `s${i}`, type: "state_write", parameters: { key: s.key, value: s.value }, dependencies: deps };
            if (s.kind === "read") return { id: `s${i}`, type: "state_read", parameters: { key: s.key }, dependencies: deps, failure_behavior: "skip" };
            return tc(`s${i}`, "t", { parameters: { async: s.async }, expected_effects: { [s.key]: s.value }, dependencies: deps });
          });
          const failing: ActionInput =
            fault === "policy"
              ? tc("bad", "forbidden")
              : fault === "assertion"
                ? { id: "bad", type: "assertion", preconditions: [{ key: "never", operator: "exists" }] }
                : tc("bad", "broken", { timeout_ms: 5, failure_behavior: fault === "terminal" ? "skip" : "retry", max_retries: 1 });
          actions.splice(at % (actions.length + 1), 0, failing);
          const r = await timers.settle(rt.executeProposal({ actions }));
          expect(r.results.find((x) => x.action_id === "bad")!.status).toMatch(/failed|rejected/);
          expect(rt.state.snapshot()).toEqual(before);
          for (const res of r.results) if (res.status === "succeeded") expect(res).toMatchObject({ rolled_back: true, state_changes: {} });
          expect(timers.pending()).toBe(0);
        },
      ),
      { numRuns: 150 },
    );
  });
});
