/**
 * `@car/engine/compat` beside the examples: the positional policy form and
 * its typed error, the JSON-string conventions, events and metrics.
 */
import { isCarError } from "@car/ir";
import { describe, expect, it } from "vitest";
import { CarRuntime, executeProposal, registerToolHandler, unregisterToolHandler, verify } from "../src/compat/index.ts";
import { Runtime } from "../src/index.ts";

const rmProposal = JSON.stringify({ actions: [{ id: "a1", type: "tool_call", tool: "shell", parameters: { command: "rm -rf /" } }] });

describe("registerPolicy", () => {
  it("takes the original's positional form on Runtime too, and the policy denies", async () => {
    const rt = new Runtime();
    rt.registerTool("shell", async () => ({ ok: true }));
    expect(rt.registerPolicy("no_rm_rf", "deny_tool_param", "shell", "command", "rm -rf")).toBe("no_rm_rf");
    const result = await rt.executeProposal(rmProposal);
    expect(result.results[0]!.status).toBe("rejected");
    expect(result.results[0]!.error).toContain("no_rm_rf");
  });

  it("names the accepted shapes for anything else", () => {
    const rt = new Runtime();
    for (const bad of [[42], [{ rule: "deny_tool" }], ["n", 7], ["n", "deny_tool", { target: "x" }], [null]] as unknown[][]) {
      let caught: unknown;
      try {
        (rt.registerPolicy as (...a: unknown[]) => string)(...bad);
      } catch (error) {
        caught = error;
      }
      expect(isCarError(caught, "invalid_params"), JSON.stringify(bad)).toBe(true);
      expect((caught as Error).message).toContain("positional arguments (name, rule, target?, key?, pattern?, valueJson?)");
    }
  });
});

describe("CarRuntime (compat)", () => {
  it("speaks JSON strings: state, tools, policies, verify", async () => {
    const rt = new CarRuntime();
    rt.stateSet("tests_passed", JSON.stringify(true));
    expect(rt.stateGet("tests_passed")).toBe("true");
    expect(rt.stateGet("missing")).toBe("null");
    expect(rt.stateKeys()).toEqual(["tests_passed"]);
    expect(() => rt.stateSet("k", "{nope")).toThrow(/valueJson is not valid JSON/);
    await rt.registerTool("deploy");
    await rt.registerPolicy("needs_tests", "require_state", null, "tests_passed", null, "true");
    expect(JSON.parse(await rt.listPolicies())).toEqual([{ name: "needs_tests", description: "require_state tests_passed" }]);
    expect(JSON.parse(await rt.listTools()).map((t: { name: string }) => t.name)).toEqual(["deploy"]);
    const report = JSON.parse(await rt.verifyProposal(JSON.stringify({ actions: [{ type: "tool_call", tool: "nope" }] })));
    expect(report.valid).toBe(false);
    expect(() => rt.registerPolicy("p", "deny_tool", "x", null, null, null, "session-1")).toThrow(/session-scoped/);
  });

  it("submitProposal goes through registerToolHandler; events, cost and metrics are JSON", async () => {
    const rt = new CarRuntime();
    await rt.registerTool("echo");
    await rt.registerPolicy("no_rm", "deny_tool_param", "echo", "msg", "rm -rf");
    const calls: string[] = [];
    registerToolHandler(async (callJson) => {
      calls.push(JSON.parse(callJson).tool);
      return JSON.stringify({ ok: true });
    });
    try {
      const ok = JSON.parse(await rt.submitProposal(JSON.stringify({ actions: [{ id: "ok", type: "tool_call", tool: "echo", parameters: { msg: "hi" } }] })));
      const bad = JSON.parse(
        await rt.submitProposal(JSON.stringify({ actions: [{ id: "bad", type: "tool_call", tool: "echo", parameters: { msg: "rm -rf /" } }] })),
      );
      expect([ok.results[0].status, bad.results[0].status]).toEqual(["succeeded", "rejected"]);
      expect(calls).toEqual(["echo"]);
    } finally {
      unregisterToolHandler();
    }
    const events = JSON.parse(await rt.eventQuery(JSON.stringify({ kinds: ["policy_violation"] })));
    expect(events.count).toBe(1);
    expect(events.events.map((e: { action_id: string }) => e.action_id)).toEqual(["bad"]);
    const metrics = JSON.parse(await rt.metricsSummary());
    expect(metrics).toMatchObject({ actions_succeeded: 1, actions_rejected: 1, policy_violations: 1, success_rate: 0.5 });
    expect(JSON.parse(await rt.eventCostByAgent())).toEqual([]);
    expect(await rt.eventCount()).toBeGreaterThan(3);
  });

  it("executeProposal and verify are standalone, as in the original", async () => {
    const rt = new CarRuntime();
    await rt.registerTool("echo");
    const out = JSON.parse(
      await executeProposal(rt, JSON.stringify({ actions: [{ type: "tool_call", tool: "echo", parameters: { msg: "x" } }] }), async (c) =>
        JSON.stringify({ echoed: JSON.parse(c).params.msg }),
      ),
    );
    expect(out.results[0].output).toEqual({ echoed: "x" });
    const report = JSON.parse(verify(JSON.stringify({ actions: [{ type: "tool_call", tool: "t" }] }), null, ["other"]));
    expect(report.valid).toBe(false);
    expect(report.issues[0].message).toContain("t");
  });
});
