import { manualClock, manualTimers } from "@car/ir";
import { describe, expect, it } from "vitest";
import { toolAction } from "../test-helpers.ts";
import { type ApprovalCallback, ApprovalGate, type ApprovalRequest } from "./approval-gate.ts";
import { InMemoryApprovalLedger } from "./approval-ledger.ts";
import { operationFingerprint } from "./operation-fingerprint.ts";

const edit = toolAction("write_file", { path: "a.txt", content: "x" }, "w1");
const send = toolAction("send_email", { to: "a@b.c" }, "s1");

describe("ApprovalGate", () => {
  it("allows within the standing tier without asking or recording", async () => {
    const ledger = new InMemoryApprovalLedger();
    let asked = 0;
    const gate = new ApprovalGate({ ledger, sessionId: "s", approver: async () => (asked++, "approve") });
    expect(gate.grantedTier).toBe("sandbox_edit");
    expect((await gate.authorize(edit)).decision).toBe("allow");
    expect(asked).toBe(0);
    expect(await ledger.list()).toEqual([]);
  });

  it("a capped gate judges at min(granted, ceiling), never wider, on the same ledger", async () => {
    const ledger = new InMemoryApprovalLedger();
    const gate = new ApprovalGate({ ledger, sessionId: "s", grantedTier: "full_access" });
    expect(await gate.capped("read_only").evaluate(edit)).toMatchObject({ decision: "needs_approval", granted: "read_only" });
    expect(await gate.capped("sandbox_edit").evaluate(edit)).toMatchObject({ decision: "allow", granted: "sandbox_edit" });
    expect(await gate.evaluate(edit)).toMatchObject({ decision: "allow", granted: "full_access" });
    gate.setTier("read_only");
    expect(gate.capped("full_access").grantedTier).toBe("read_only");
    // An approval recorded on the ledger answers the capped gate too.
    const fingerprint = operationFingerprint(edit);
    await ledger.record({ fingerprint, required_tier: "sandbox_edit", decision: "approved", reviewer: "op", decided_at: 0, expires_at: null, session_id: "s" });
    expect(await gate.capped("read_only").evaluate(edit)).toMatchObject({ decision: "allow", reason: "approved by op" });
  });

  it("asks above the standing tier, records who decided, and remembers the operation", async () => {
    const ledger = new InMemoryApprovalLedger();
    const clock = manualClock(1_000);
    let asked = 0;
    const gate = new ApprovalGate({
      ledger,
      sessionId: "sess",
      grantedTier: "read_only",
      clock,
      approver: async (req) => {
        asked++;
        expect(req).toMatchObject({ required_tier: "sandbox_edit", granted_tier: "read_only", session_id: "sess" });
        return { decision: "approve", reviewer: "conn:7", reason: "looks fine" };
      },
    });
    const first = await gate.authorize(edit);
    expect(first).toMatchObject({ decision: "allow", required: "sandbox_edit", granted: "read_only" });
    const records = await ledger.list();
    expect(records).toEqual([
      {
        fingerprint: operationFingerprint(edit),
        decision: "approved",
        required_tier: "sandbox_edit",
        reviewer: "conn:7",
        decided_at: 1_000,
        expires_at: null,
        reason: "looks fine",
        session_id: "sess",
        action_id: "w1",
        tool: "write_file",
        id: 1,
      },
    ]);
    // The same operation under another id, with keys reordered, is answered from the ledger.
    const again = toolAction("write_file", { content: "x", path: "a.txt" }, "w2");
    expect((await gate.authorize(again)).decision).toBe("allow");
    expect(asked).toBe(1);
  });

  it("tells the caller just before the approver is asked, and says how long the answer took", async () => {
    const clock = manualClock(5_000);
    const order: string[] = [];
    const gate = new ApprovalGate({
      ledger: new InMemoryApprovalLedger(),
      sessionId: "s",
      clock,
      approver: async (req) => {
        order.push(`asked ${req.action.id}`);
        clock.advance(1_250);
        return { decision: "approve", reviewer: "alice" };
      },
    });
    const asking = (req: ApprovalRequest) => order.push(`asking ${req.fingerprint} ${req.required_tier}/${req.granted_tier}`);
    const decided = await gate.authorize(send, undefined, { asking });
    expect(order).toEqual([`asking ${operationFingerprint(send)} full_access/sandbox_edit`, "asked s1"]);
    expect(decided).toMatchObject({ decision: "allow", waited_ms: 1_250, record: { reviewer: "alice" } });
    // Nobody is asked (the ledger answers, or the action is within the tier): no wait to tell of.
    order.length = 0;
    expect(await gate.authorize(send, undefined, { asking })).not.toHaveProperty("waited_ms");
    expect(await gate.authorize(edit, undefined, { asking })).not.toHaveProperty("waited_ms");
    expect(order).toEqual([]);
    // No approver configured: refused at once, nobody was asked.
    const alone = new ApprovalGate({ ledger: new InMemoryApprovalLedger(), sessionId: "s" });
    const refused = await alone.authorize(send, undefined, { asking });
    expect(refused.decision).toBe("deny");
    expect(refused).not.toHaveProperty("waited_ms");
    expect(order).toEqual([]);
  });

  it("full_access always needs a human, even with a full_access grant", async () => {
    const gate = new ApprovalGate({ ledger: new InMemoryApprovalLedger(), sessionId: "s", grantedTier: "full_access" });
    expect((await gate.evaluate(send)).decision).toBe("needs_approval");
    // No approver configured: refused, and the refusal is recorded.
    const denied = await gate.authorize(send);
    expect(denied.decision).toBe("deny");
    expect(denied.record).toMatchObject({ decision: "rejected", reviewer: "none" });
  });

  it("a rejection is recorded and wins over later evaluations", async () => {
    const ledger = new InMemoryApprovalLedger();
    const gate = new ApprovalGate({ ledger, sessionId: "s", approver: async () => "deny" });
    expect((await gate.authorize(send)).decision).toBe("deny");
    expect((await gate.evaluate(send)).decision).toBe("deny");
    gate.setTier("full_access");
    expect((await gate.evaluate(send)).decision).toBe("deny");
  });

  it("no answer within the timeout is a refusal, and the approver is told to stop", async () => {
    const timers = manualTimers();
    const ledger = new InMemoryApprovalLedger();
    let aborted = false;
    const approver: ApprovalCallback = (_req, signal) =>
      new Promise(() => {
        signal.addEventListener("abort", () => {
          aborted = true;
        });
      });
    const gate = new ApprovalGate({ ledger, sessionId: "s", approver, timers, timeoutMs: 5_000 });
    const pending = gate.authorize(send);
    await Promise.resolve();
    await Promise.resolve();
    expect(timers.pending()).toBe(1);
    while (timers.runNext());
    const decided = await pending;
    expect(decided).toMatchObject({ decision: "deny", reason: "no answer within 5000 ms" });
    expect(decided.record).toMatchObject({ decision: "rejected", reviewer: "timeout" });
    expect(aborted).toBe(true);
    expect(timers.pending()).toBe(0);
  });

  it("an approver that throws has not approved, and its timer is cleared", async () => {
    const timers = manualTimers();
    const gate = new ApprovalGate({
      ledger: new InMemoryApprovalLedger(),
      sessionId: "s",
      timers,
      approver: async () => {
        throw new Error("ui gone");
      },
    });
    const decided = await gate.authorize(send);
    expect(decided.decision).toBe("deny");
    expect(decided.reason).toContain("ui gone");
    expect(timers.pending()).toBe(0);
  });

  it("an expired decision no longer applies", async () => {
    const clock = manualClock(0);
    const ledger = new InMemoryApprovalLedger();
    let asked = 0;
    const gate = new ApprovalGate({ ledger, sessionId: "s", clock, decisionTtlMs: 1_000, approver: async () => (asked++, "approve") });
    await gate.authorize(send);
    clock.advance(999);
    expect((await gate.authorize(send)).decision).toBe("allow");
    clock.advance(1);
    expect((await gate.evaluate(send)).decision).toBe("needs_approval");
    await gate.authorize(send);
    expect(asked).toBe(2);
  });

  it("the newest recorded decision answers: a rejection denies over tier and posture until a later approval replaces it, and back", async () => {
    const ledger = new InMemoryApprovalLedger();
    const decide = (decision: "approved" | "rejected", at: number) =>
      ledger.record({ fingerprint: operationFingerprint(edit), decision, required_tier: "full_access", reviewer: "alice", decided_at: at, expires_at: null });
    const gate = new ApprovalGate({ ledger, sessionId: "s", grantedTier: "full_access", posture: () => "always_allow" });
    expect((await gate.evaluate(edit)).decision).toBe("allow");
    await decide("rejected", 1);
    // Within the standing tier and under an always_allow posture, the rejection still denies.
    expect(await gate.evaluate(edit)).toMatchObject({ decision: "deny", reason: "rejected by alice" });
    await decide("approved", 2);
    expect(await gate.evaluate(edit)).toMatchObject({ decision: "allow", reason: "approved by alice" });
    await decide("rejected", 3);
    expect((await gate.evaluate(edit)).decision).toBe("deny");
  });

  it("an approval at a lower tier than the operation needs does not widen access", async () => {
    const ledger = new InMemoryApprovalLedger();
    await ledger.record({
      fingerprint: operationFingerprint(send),
      decision: "approved",
      required_tier: "sandbox_edit",
      reviewer: "conn:1",
      decided_at: 0,
      expires_at: null,
    });
    const gate = new ApprovalGate({ ledger, sessionId: "s" });
    expect((await gate.evaluate(send)).decision).toBe("needs_approval");
  });

  it("a posture lookup can allow, require approval, or deny per tier", async () => {
    const ledger = new InMemoryApprovalLedger();
    const gate = new ApprovalGate({
      ledger,
      sessionId: "s",
      posture: (tier) => (tier === "read_only" ? "deny" : tier === "sandbox_edit" ? "require_approval" : "always_allow"),
    });
    expect((await gate.evaluate(toolAction("read_file", { path: "a" }))).decision).toBe("deny");
    expect((await gate.evaluate(edit)).decision).toBe("needs_approval");
    expect((await gate.evaluate(send)).decision).toBe("allow");
  });

  it("awaits a posture lookup that answers asynchronously (a posture table in a database)", async () => {
    const gate = new ApprovalGate({
      ledger: new InMemoryApprovalLedger(),
      sessionId: "s",
      posture: async (tier) => (tier === "sandbox_edit" ? "deny" : undefined),
    });
    expect((await gate.evaluate(edit)).decision).toBe("deny");
    expect((await gate.evaluate(send)).decision).toBe("needs_approval");
  });
});

describe("ApprovalGate: a supervisor's escalation", () => {
  it("makes an action within the standing tier need a recorded approval, whatever the posture; only an approval at its tier answers", async () => {
    const ledger = new InMemoryApprovalLedger();
    const gate = new ApprovalGate({ ledger, sessionId: "s", grantedTier: "full_access", posture: () => "always_allow" });
    expect((await gate.evaluate(edit)).decision).toBe("allow");
    const escalated = await gate.evaluate(edit, undefined, { escalated: true });
    expect(escalated).toMatchObject({ decision: "needs_approval", reason: "escalated by a supervisor", required: "sandbox_edit" });
    const fingerprint = operationFingerprint(edit);
    await ledger.record({ fingerprint, decision: "approved", required_tier: "read_only", reviewer: "low", decided_at: 1, expires_at: null });
    expect((await gate.evaluate(edit, undefined, { escalated: true })).decision).toBe("needs_approval");
    await ledger.record({ fingerprint, decision: "approved", required_tier: "sandbox_edit", reviewer: "human", decided_at: 2, expires_at: null });
    expect(await gate.evaluate(edit, undefined, { escalated: true })).toMatchObject({ decision: "allow", reason: "approved by human" });
    await ledger.record({ fingerprint, decision: "rejected", required_tier: "sandbox_edit", reviewer: "human", decided_at: 3, expires_at: null });
    expect((await gate.evaluate(edit, undefined, { escalated: true })).decision).toBe("deny");
  });
});
