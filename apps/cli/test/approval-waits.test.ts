/**
 * Approval waits as a person sees them, from the events a real runtime
 * writes while its approval gate waits for the approver (on fake time): the
 * progress lines of `car run` as the wait opens and closes, and the run
 * report's timeline — the wait's span, decision and reviewer, rows in the
 * plan's order, and a question the log holds no answer to.
 */
import { type CarEvent, manualTimers, Runtime } from "@car/engine";
import { type ApprovalAnswer, type ApprovalCallback, ApprovalGate, InMemoryApprovalLedger } from "@car/policy";
import { describe, expect, it } from "vitest";
import { colors } from "../src/render/color.ts";
import { progressLine } from "../src/render/run-progress.ts";
import { runTimeline } from "@car/server/run-report";

const T0 = 1_700_000_000_000;

/** Runs a proposal whose `edit` waits 600 ms for alice's approval and whose `send` waits 250 ms for bob's answer. */
async function approvedRun(send: ApprovalAnswer): Promise<CarEvent[]> {
  const timers = manualTimers(T0);
  const answers: Record<string, [ApprovalAnswer, number]> = { edit: [{ decision: "approve", reviewer: "alice" }, 600], send: [send, 250] };
  const approver: ApprovalCallback = (req) =>
    new Promise((resolve) => timers.setTimeout(() => resolve(answers[req.action.id]![0]), answers[req.action.id]![1]));
  const ledger = new InMemoryApprovalLedger();
  const rt = new Runtime({
    clock: timers,
    timers,
    approvalGate: new ApprovalGate({ ledger, sessionId: "s", grantedTier: "read_only", clock: timers, timers, approver }),
  });
  rt.registerTool({ name: "read_file" }, () => "text");
  rt.registerTool({ name: "write_file" }, () => "ok");
  rt.registerTool({ name: "send_email" }, () => "sent");
  await timers.settle(
    rt.executeProposal({
      id: "waits",
      actions: [
        { id: "look", type: "tool_call", tool: "read_file", parameters: { path: "a" } },
        { id: "edit", type: "tool_call", tool: "write_file", parameters: { path: "a" }, dependencies: ["look"] },
        { id: "send", type: "tool_call", tool: "send_email", parameters: { to: "x@y.z" }, dependencies: ["edit"] },
      ],
    }),
  );
  return rt.events.query({ proposal_id: "waits" });
}

const labels = new Map([
  ["look", "read_file"],
  ["edit", "write_file"],
  ["send", "send_email"],
]);

describe("approval waits in car run's progress", () => {
  it("shows the wait when the approver is asked and the answer, with who gave it, when it comes", async () => {
    const lines = (await approvedRun("approve")).map((e) => progressLine(e, colors(false), labels)).filter((l): l is string => l !== undefined);
    expect(lines.slice(0, 4)).toEqual([
      "⏸ edit (write_file) waiting for approval (requires sandbox_edit, granted read_only)",
      "✔ edit (write_file) approved by alice after 600 ms",
      "⏸ send (send_email) waiting for approval (requires full_access, granted read_only)",
      "✔ send (send_email) approved by approver after 250 ms",
    ]);
    expect(lines.slice(4)).toContain("▶ edit (write_file)");
  });

  it("a refusal after a wait says who refused and how long it took", async () => {
    const lines = (await approvedRun({ decision: "deny", reviewer: "bob" })).map((e) => progressLine(e, colors(false), labels));
    expect(lines).toContain("⛔ send (send_email) not approved by bob after 250 ms (requires full_access, granted read_only)");
  });
});

describe("approval waits in the run report's timeline", () => {
  it("draws each wait from the question to its answer, with the decision and the reviewer", async () => {
    const events = await approvedRun({ decision: "deny", reviewer: "bob" });
    const t = runTimeline("waits", events);
    // Rows keep the plan's order although the approval waits come before anything runs.
    expect(t.rows.map((r) => [r.id, r.label, r.status])).toEqual([
      ["look", "read_file", "rejected"],
      ["edit", "write_file", "rejected"],
      ["send", "send_email", "rejected"],
    ]);
    const [look, edit, send] = t.rows;
    expect(look!.waits).toEqual([]);
    expect(edit!.waits).toEqual([{ at: 0, ms: 600, reason: "approval", decision: "allow", reviewer: "alice" }]);
    expect(send!.waits).toEqual([{ at: 600, ms: 250, reason: "approval", decision: "deny", reviewer: "bob" }]);
    expect(send!.denials).toEqual(["approval: requires full_access, granted read_only"]);
    expect(t.span).toBe(850);
  });

  it("a question the log holds no answer to is drawn as still open, to the end of the log", async () => {
    const events = await approvedRun("approve");
    const asked = events.findIndex((e) => e.kind === "approval_requested" && e.action_id === "send");
    const cut = [...events.slice(0, asked + 1), { kind: "proposal_interrupted", timestamp: new Date(T0 + 2_000).toISOString(), data: {} }];
    const send = runTimeline("waits", cut).rows.find((r) => r.id === "send")!;
    expect(send.waits).toEqual([{ at: 600, ms: 1_400, reason: "approval", decision: "pending" }]);
  });
});
