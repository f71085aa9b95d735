/**
 * Trace rules on the dispatch path: a violation is a policy rejection with
 * the rule's stable name, handled per `failure_behavior`; the trace spans
 * the proposal or the session as the rule says.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApprovalGate } from "@car/policy";
import { isCarError } from "@car/ir";
import { describe, expect, it } from "vitest";
import { Runtime, manualTimers } from "../src/index.ts";
import { fakeRuntime, tc } from "./helpers.ts";

function withTools(rt: Runtime, calls: string[]): void {
  for (const name of ["run_tests", "deploy", "read_secret", "http_request", "send_email", "build"]) {
    rt.registerTool(name, (p) => {
      calls.push(name);
      if (p["fail"] === true) throw new Error(`${name} failed`);
      return { ok: name };
    });
  }
}

describe("trace rules at dispatch", () => {
  it("only_after: deploy unordered with run_tests is refused with the rule's name; ordered after it, it runs", async () => {
    const { rt } = fakeRuntime();
    const calls: string[] = [];
    withTools(rt, calls);
    rt.registerPolicy({ name: "tests_first", rule: "trace_rule", trace: { kind: "only_after", tool: "deploy", after: "run_tests" } });
    const bad = await rt.executeProposal({ actions: [tc("d", "deploy"), tc("t", "run_tests")] });
    expect(bad.results[0]).toMatchObject({
      status: "rejected",
      error: "denied by policy: tests_first: 'deploy' may run only after 'run_tests' succeeded in this proposal, and it has not",
    });
    expect(calls).not.toContain("deploy");
    expect(rt.events.query({ kinds: ["policy_violation"] }).map((e) => [e.action_id, e.data["policy_name"]])).toEqual([["d", "tests_first"]]);
    const good = await rt.executeProposal({ actions: [tc("t", "run_tests"), tc("d", "deploy", { dependencies: ["t"] })] });
    expect(good.results.map((r) => r.status)).toEqual(["succeeded", "succeeded"]);
    // A failed run_tests is not a success: the deploy after it is refused (here, by the dependency first).
    const failed = await rt.executeProposal({
      actions: [tc("t", "run_tests", { parameters: { fail: true }, failure_behavior: "skip" }), tc("d", "deploy", { failure_behavior: "skip" })],
    });
    expect(failed.results[1]!.error).toMatch(/^denied by policy: tests_first:/);
  });

  it("a violation follows failure_behavior: skip continues, abort rolls back", async () => {
    const { rt } = fakeRuntime();
    const calls: string[] = [];
    withTools(rt, calls);
    rt.registerPolicy({ name: "no_egress_after_secret", rule: "trace_rule", trace: { kind: "never_after", tool: "http_request", after: "read_secret" } });
    const skip = await rt.executeProposal({
      actions: [
        tc("s", "read_secret"),
        tc("h", "http_request", { dependencies: ["s"], failure_behavior: "skip" }),
        tc("b", "build", { dependencies: ["s"], expected_effects: { built: true } }),
      ],
    });
    expect(skip.results.map((r) => r.status)).toEqual(["succeeded", "rejected", "succeeded"]);
    expect(rt.state.get("built")).toBe(true);
    const abort = await rt.executeProposal({
      actions: [tc("s", "read_secret", { expected_effects: { x: 1 } }), tc("h", "http_request", { dependencies: ["s"] })],
    });
    expect(abort.results[0]!.rolled_back).toBe(true);
    expect(rt.state.get("x")).toBeUndefined();
  });

  it("session scope sees earlier proposals; proposal scope does not", async () => {
    const { rt } = fakeRuntime();
    const calls: string[] = [];
    withTools(rt, calls);
    rt.registerPolicy({ name: "tests_in_session", rule: "trace_rule", trace: { kind: "only_after", tool: "deploy", after: "run_tests", scope: "session" } });
    rt.registerPolicy({ name: "three_mails", rule: "trace_rule", trace: { kind: "max_calls", tool: "send_email", max_calls: 3, scope: "session" } });
    expect((await rt.executeProposal({ actions: [tc("d", "deploy", { failure_behavior: "skip" })] })).results[0]!.status).toBe("rejected");
    await rt.executeProposal({ actions: [tc("t", "run_tests")] });
    expect((await rt.executeProposal({ actions: [tc("d", "deploy")] })).results[0]!.status).toBe("succeeded");
    const mails = (n: number) => Array.from({ length: n }, (_, i) => tc(`m${i}`, "send_email", { parameters: { n: i }, failure_behavior: "skip" }));
    const first = await rt.executeProposal({ actions: mails(2) });
    const second = await rt.executeProposal({ actions: mails(2) });
    expect([...first.results, ...second.results].map((r) => r.status)).toEqual(["succeeded", "succeeded", "succeeded", "rejected"]);
    expect(rt.unregisterPolicy("three_mails")).toBe(1);
    expect((await rt.executeProposal({ actions: mails(1) })).results[0]!.status).toBe("succeeded");
  });

  it("max_calls holds under concurrency: of 8 async calls in flight at once, exactly 2 are dispatched", async () => {
    const rt = new Runtime();
    let dispatched = 0;
    rt.registerTool("send_email", async () => {
      dispatched++;
      await new Promise((done) => setTimeout(done, 5));
      return "sent";
    });
    rt.registerPolicy({ name: "two", rule: "trace_rule", trace: { kind: "max_calls", tool: "send_email", max_calls: 2 } });
    const r = await rt.executeProposal({
      actions: Array.from({ length: 8 }, (_, i) => tc(`m${i}`, "send_email", { parameters: { i }, failure_behavior: "skip" })),
    });
    expect(dispatched).toBe(2);
    expect(r.results.filter((x) => x.status === "succeeded")).toHaveLength(2);
    await rt.close();
  });

  it("requires_approval: refused without an approval; allowed once a human approved this operation", async () => {
    const timers = manualTimers();
    const base = new Runtime({ clock: timers, timers });
    const gate = new ApprovalGate({ ledger: base.approvals, sessionId: "s", grantedTier: "read_only", clock: timers, timers, approver: async () => "approve" });
    const gated = new Runtime({ clock: timers, timers, store: base.store, approvalGate: gate });
    const plain = new Runtime({ clock: timers, timers });
    for (const rt of [gated, plain]) {
      rt.registerTool("deploy", () => "done");
      rt.registerPolicy({ name: "human_first", rule: "trace_rule", trace: { kind: "requires_approval", tool: "deploy" } });
    }
    const refused = await timers.settle(plain.executeProposal({ actions: [tc("d", "deploy", { parameters: { env: "prod" } })] }));
    expect(refused.results[0]!.error).toBe("denied by policy: human_first: 'deploy' requires a prior approval in this proposal, and none is recorded");
    const allowed = await timers.settle(gated.executeProposal({ actions: [tc("d", "deploy", { parameters: { env: "prod" } })] }));
    expect(allowed.results[0]!.status).toBe("succeeded");
  });

  it("trace rules load from policy files (fail closed on a malformed one) and feed verifyProposal", async () => {
    const dir = mkdtempSync(join(tmpdir(), "car-trace-"));
    try {
      writeFileSync(join(dir, "a.toml"), '[[trace_rule]]\nkind = "only_after"\ntool = "deploy"\nafter = "run_tests"\n');
      const { rt } = fakeRuntime();
      withTools(rt, []);
      expect(rt.loadPolicies(dir)).toBe(1);
      expect(rt.traceGate.names()).toEqual(["trace_rule:only_after(deploy,run_tests)"]);
      const v = rt.verifyProposal({ actions: [tc("t", "run_tests"), tc("d", "deploy")] });
      expect(v.issues.map((i) => i.message)).toContainEqual(expect.stringContaining("trace_rule:only_after(deploy,run_tests): the DAG permits 'd'"));
      writeFileSync(join(dir, "b.toml"), '[[trace_rule]]\nkind = "max_calls"\ntool = "deploy"\n');
      const fresh = fakeRuntime().rt;
      let thrown: unknown;
      try {
        fresh.loadPolicies(dir);
      } catch (err) {
        thrown = err;
      }
      expect(isCarError(thrown, "policy_load_failed")).toBe(true);
      expect((thrown as Error).message).toContain(join(dir, "b.toml"));
      expect(fresh.traceGate.size).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("only_after: a detached run_tests that has merely started is not a success; one that ends in success is", async () => {
    const rt = new Runtime();
    const ends: { resolve(v: unknown): void; reject(e: Error): void }[] = [];
    const calls: string[] = [];
    rt.registerTool("run_tests", () => new Promise((resolve, reject) => ends.push({ resolve, reject })));
    rt.registerTool("deploy", () => {
      calls.push("deploy");
      return { ok: true };
    });
    rt.registerPolicy({ name: "tests_first", rule: "trace_rule", trace: { kind: "only_after", tool: "deploy", after: "run_tests", scope: "session" } });
    const started = await rt.executeProposal({
      actions: [tc("t", "run_tests", { invocation_mode: "long_running" }), tc("d", "deploy", { dependencies: ["t"], failure_behavior: "skip" })],
    });
    expect(started.results[0]!.status).toBe("succeeded");
    expect(started.results[1]).toMatchObject({ status: "rejected", error: expect.stringMatching(/^denied by policy: tests_first:/) });
    // The tests then fail: still no success on record.
    ends[0]!.reject(new Error("3 tests failed"));
    await new Promise((r) => setTimeout(r, 5));
    expect((await rt.executeProposal({ actions: [tc("d", "deploy", { failure_behavior: "skip" })] })).results[0]!.status).toBe("rejected");
    expect(calls).toEqual([]);
    // A detached run that ends in success counts once it has.
    await rt.executeProposal({ actions: [tc("t", "run_tests", { invocation_mode: "long_running" })] });
    ends[1]!.resolve({ passed: 12 });
    await new Promise((r) => setTimeout(r, 5));
    expect((await rt.executeProposal({ actions: [tc("d", "deploy")] })).results[0]!.status).toBe("succeeded");
    expect(calls).toEqual(["deploy"]);
  });

  it("a malformed registration is invalid_params naming the policy", () => {
    const { rt } = fakeRuntime();
    expect(() => rt.registerPolicy({ name: "x", rule: "trace_rule", trace: { kind: "only_after", tool: "deploy" } })).toThrow(
      /policy 'x' \(trace_rule\): trace.after is required/,
    );
    expect(() => rt.registerPolicy({ name: "x", rule: "trace_rule" })).toThrow(/needs 'trace'/);
    expect(rt.traceGate.size).toBe(0);
  });
});
