/**
 * The run's report beside the wire result (`executeProposalWithReport`):
 * each outcome with the code that says what went wrong, the actions the
 * approval gate held, the skip actions whose tool failed — read from what
 * the engine decided, so a transport never parses a message. The result
 * beside it is the one `executeProposal` returns, byte for byte on the wire.
 * A refused commit needs a store that can refuse: car-store-sqlite's
 * sqlite-shared-file.test.ts covers `refused`.
 */
import { serializeProposalResult } from "@car/ir";
import { ApprovalGate } from "@car/policy";
import { describe, expect, it } from "vitest";
import { manualTimers, Runtime, TerminalToolError } from "../src/index.ts";
import { fakeRuntime, tc } from "./helpers.ts";

function tools(rt: Runtime): Runtime {
  rt.registerTool({ name: "ok" }, () => "done");
  rt.registerTool({ name: "boom" }, () => {
    throw new Error("it broke");
  });
  rt.registerTool({ name: "fatal" }, () => {
    throw new TerminalToolError("it broke for good");
  });
  return rt;
}

describe("the run's report", () => {
  it("committed: no code; the result is the one executeProposal returns, identical on the wire", async () => {
    const proposal = { id: "p", actions: [tc("a", "ok"), tc("b", "ok", { dependencies: ["a"] })] };
    const { rt } = fakeRuntime();
    const { result, report } = await tools(rt).executeProposalWithReport(proposal);
    expect(report).toEqual({ proposal_id: "p", run_id: expect.stringMatching(/^run-/), outcome: "committed", gated: [], skipped_failures: [] });
    expect(report.run_id).toBe(rt.events.query({ kinds: ["proposal_received"] })[0]!.data["run_id"]);
    const { rt: twin } = fakeRuntime();
    const plain = await tools(twin).executeProposal(proposal);
    expect(JSON.stringify(serializeProposalResult(result))).toBe(JSON.stringify(serializeProposalResult(plain)));
  });

  it("committed with a skip action whose tool failed: named, and no code (DECISIONS §14)", async () => {
    const { rt } = fakeRuntime();
    const { result, report } = await tools(rt).executeProposalWithReport({ actions: [tc("a", "boom", { failure_behavior: "skip" }), tc("b", "ok")] });
    expect(result.results.map((r) => r.status)).toEqual(["skipped", "succeeded"]);
    expect(report).toMatchObject({ outcome: "committed", skipped_failures: ["a"] });
    expect(report.code).toBeUndefined();
  });

  it("rolled_back: the failure's code, a terminal one first", async () => {
    const { rt } = fakeRuntime();
    tools(rt);
    const failed = await rt.executeProposalWithReport({ actions: [tc("a", "ok"), tc("b", "boom", { dependencies: ["a"] })] });
    expect(failed.report).toMatchObject({ outcome: "rolled_back", code: "tool_error" });
    const terminal = await rt.executeProposalWithReport({ actions: [tc("a", "fatal")] });
    expect(terminal.report).toMatchObject({ outcome: "rolled_back", code: "terminal_failure" });
  });

  it("rolled_back by a policy: policy_denied, known from the rejecting stage", async () => {
    const { rt } = fakeRuntime();
    tools(rt).registerPolicy({ name: "no_ok", rule: "deny_tool", target: "ok" });
    const { result, report } = await rt.executeProposalWithReport({ actions: [tc("a", "ok")] });
    expect(result.results[0]!.status).toBe("rejected");
    expect(report).toMatchObject({ outcome: "rolled_back", code: "policy_denied" });
  });

  it("rolled_back by a cancel after work succeeded: cancelled", async () => {
    const { rt } = fakeRuntime();
    const cancel = new AbortController();
    rt.registerTool({ name: "ok" }, () => {
      cancel.abort(new Error("stop"));
      return "done";
    });
    const { report } = await rt.executeProposalWithReport({ actions: [tc("a", "ok"), tc("b", "ok", { dependencies: ["a"] })] }, undefined, {
      signal: cancel.signal,
    });
    expect(report).toMatchObject({ outcome: "rolled_back", code: "cancelled" });
  });

  it("rejected at admission: the finding's code (static gate, budget)", async () => {
    const { rt } = fakeRuntime();
    tools(rt);
    const unknown = await rt.executeProposalWithReport({ actions: [tc("a", "nope")] });
    expect(unknown.report).toMatchObject({ outcome: "rejected", code: "verification_failed", gated: [] });
    const over = await rt.executeProposalWithReport({ actions: [tc("a", "ok"), tc("b", "ok")] }, undefined, { budget: { max_actions: 1 } });
    expect(over.report).toMatchObject({ outcome: "rejected", code: "budget_exceeded" });
  });

  it("rejected by the approval gate: approval_denied, each held action with its fingerprint and tiers", async () => {
    const timers = manualTimers(1_700_000_000_000);
    const base = new Runtime({ clock: timers, timers });
    const gate = new ApprovalGate({ ledger: base.approvals, sessionId: "s", clock: timers, timers, grantedTier: "read_only" });
    const rt = new Runtime({ clock: timers, timers, store: base.store, approvalGate: gate });
    rt.registerTool({ name: "write_file" }, () => "written");
    rt.registerTool({ name: "read_file" }, () => "text");
    const { report } = await rt.executeProposalWithReport({
      actions: [tc("r", "read_file", { parameters: { path: "a" } }), tc("w", "write_file", { parameters: { path: "b" } })],
    });
    const decided = rt.events.query({ kinds: ["approval_decided"] });
    expect(decided).toHaveLength(1);
    expect(report).toMatchObject({ outcome: "rejected", code: "approval_denied" });
    expect(report.gated).toEqual([
      {
        action_id: "w",
        stage: "admission",
        decision: "needs_approval",
        fingerprint: decided[0]!.data["fingerprint"],
        required: "sandbox_edit",
        granted: "read_only",
        reason: decided[0]!.data["reason"],
      },
    ]);
  });

  it("a resolved form the gate holds at dispatch is reported at its stage (DECISIONS §22)", async () => {
    const timers = manualTimers(1_700_000_000_000);
    const base = new Runtime({ clock: timers, timers });
    const gate = new ApprovalGate({ ledger: base.approvals, sessionId: "s", clock: timers, timers });
    const rt = new Runtime({ clock: timers, timers, store: base.store, approvalGate: gate });
    rt.registerTool({ name: "read_file" }, () => "cleanup: rm -rf /srv/data");
    rt.registerTool({ name: "write_file" }, () => "written");
    const { result, report } = await rt.executeProposalWithReport({
      actions: [
        tc("r", "read_file", { parameters: { path: "a" } }),
        tc("w", "write_file", { parameters: { path: "notes.txt", content: "$r.output" }, dependencies: ["r"] }),
      ],
    });
    expect(result.results.map((r) => r.status)).toEqual(["succeeded", "rejected"]);
    expect(report).toMatchObject({ outcome: "rolled_back", code: "approval_denied" });
    const decided = rt.events.query({ kinds: ["approval_decided"] }).at(-1)!;
    expect(report.gated).toEqual([
      {
        action_id: "w",
        stage: "dispatch",
        decision: decided.data["decision"],
        fingerprint: decided.data["fingerprint"],
        required: "full_access",
        granted: "sandbox_edit",
        ...(decided.data["reason"] !== undefined ? { reason: decided.data["reason"] } : {}),
        reviewer: "none",
      },
    ]);
  });
});
