/**
 * The runtime's supervisor and approval waits (src/supervision/): a parked
 * proposal waits for its verdict before any other admission check, both
 * ends on the record; `deny` rejects whole, `allow` bypasses nothing,
 * `escalate` makes every action need a recorded approval; an approval wait
 * is listed, woken by a nudge, and rejected at its deadline — and nothing
 * runs before the decision.
 */
import { ApprovalGate } from "@car/policy";
import { describe, expect, it } from "vitest";
import { ApprovalWaits, Runtime, type SupervisionDecision, type Supervisor, type WaitingApproval } from "../src/index.ts";

/** A runtime on a gate at `sandbox_edit` with `send_email`, `read_file` tools; `calls` records what ran. */
function runtime(supervisor?: Supervisor): { rt: Runtime; calls: string[]; gate: ApprovalGate } {
  const base = new Runtime();
  const gate = new ApprovalGate({ ledger: base.approvals, sessionId: "s", grantedTier: "sandbox_edit" });
  const rt = new Runtime({ store: base.store, approvalGate: gate, ...(supervisor !== undefined ? { supervisor } : {}) });
  const calls: string[] = [];
  rt.registerTool("read_file", () => {
    calls.push("read_file");
    return "text";
  });
  rt.registerTool("send_email", () => {
    calls.push("send_email");
    return "sent";
  });
  return { rt, calls, gate };
}

const read = { id: "r", type: "tool_call", tool: "read_file", parameters: { path: "notes/a.txt", note: "value-never-logged" } } as const;
const send = { id: "s", type: "tool_call", tool: "send_email", parameters: { to: "ops@example.com" } } as const;

/** A supervisor that parks everything and answers `decision` once asked. */
function answering(decision: SupervisionDecision): { supervisor: Supervisor; asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    supervisor: (request) => {
      asked.push(request.proposal.id);
      return { intent_id: `i-${request.proposal.id}`, record: { action_ids: request.proposal.actions.map((a) => a.id) }, decision: Promise.resolve(decision) };
    },
  };
}

describe("the supervisor at admission", () => {
  it("parks, then allows: the proposal runs; supervision_parked and supervision_decided are on the record", async () => {
    const { supervisor, asked } = answering({ kind: "allow", reviewer: "sup" });
    const { rt, calls } = runtime(supervisor);
    const r = await rt.executeProposal({ id: "p1", actions: [read] });
    expect(r.results[0]!.status).toBe("succeeded");
    expect(asked).toEqual(["p1"]);
    expect(calls).toEqual(["read_file"]);
    const kinds = rt.events.query({ proposal_id: "p1" }).map((e) => e.kind);
    expect(kinds.indexOf("supervision_parked")).toBeLessThan(kinds.indexOf("supervision_decided"));
    expect(kinds.indexOf("supervision_decided")).toBeLessThan(kinds.indexOf("action_started"));
    const decided = rt.events.query({ proposal_id: "p1", kinds: ["supervision_decided"] })[0]!;
    expect(decided.data).toMatchObject({ intent_id: "i-p1", decision: "allow", reviewer: "sup" });
  });

  it("deny rejects every action with the reason and runs nothing", async () => {
    const { rt, calls } = runtime(answering({ kind: "deny", reviewer: "sup", reason: "freeze" }).supervisor);
    const r = await rt.executeProposal({ id: "p2", actions: [read, { ...read, id: "r2" }] });
    expect(r.results.map((x) => x.status)).toEqual(["rejected", "rejected"]);
    expect(r.results[0]!.error).toContain("denied by supervisor: freeze");
    expect(calls).toEqual([]);
  });

  it("allow is no bypass: a full_access action still needs its approval", async () => {
    const { rt, calls } = runtime(answering({ kind: "allow", reviewer: "sup" }).supervisor);
    const r = await rt.executeProposal({ id: "p3", actions: [send] });
    expect(r.results[0]!.status).toBe("rejected");
    expect(r.results[0]!.error).toMatch(/needs approval: fingerprint [0-9a-f]{64} requires full_access/);
    expect(calls).toEqual([]);
  });

  it("escalate makes even a read need a recorded approval; once approved, the next run passes", async () => {
    const { rt, calls } = runtime(answering({ kind: "escalate", reviewer: "sup", reason: "look" }).supervisor);
    const r = await rt.executeProposal({ id: "p4", actions: [read] });
    expect(r.results[0]!.error).toContain("escalated by a supervisor");
    const fingerprint = /fingerprint ([0-9a-f]{64})/.exec(r.results[0]!.error!)![1]!;
    await rt.approvals.record({ fingerprint, decision: "approved", required_tier: "read_only", reviewer: "human", decided_at: Date.now(), expires_at: null });
    expect((await rt.executeProposal({ id: "p5", actions: [read] })).results[0]!.status).toBe("succeeded");
    expect(calls).toEqual(["read_file"]);
  });

  it("a supervisor that watches nothing (undefined) leaves no trace", async () => {
    const { rt } = runtime(() => undefined);
    await rt.executeProposal({ id: "p6", actions: [read] });
    expect(rt.events.query({ proposal_id: "p6", kinds: ["supervision_parked", "supervision_decided"] })).toEqual([]);
  });
});

describe("approvals that wait", () => {
  it("lists the wait, runs nothing, and runs once a decision lands and the wait is nudged", async () => {
    const requested: WaitingApproval[] = [];
    const resolved: string[] = [];
    const waits = new ApprovalWaits({ requested: (w) => requested.push(w), resolved: (_w, d, by) => resolved.push(`${d} by ${by}`) }, 10_000);
    const { rt, calls } = runtime();
    const running = rt.executeProposal({ id: "w1", actions: [send] }, undefined, { approvalWait: { waits, timeoutMs: 20_000, asked_by: "test" } });
    await expect.poll(() => waits.size).toBe(1);
    const [wait] = waits.list();
    expect(wait).toMatchObject({
      tool: "send_email",
      required: "full_access",
      granted: "sandbox_edit",
      parameter_keys: ["to"],
      asked_by: "test",
      proposal_id: "w1",
    });
    expect(calls).toEqual([]);
    // A nudge without a decision changes nothing.
    expect(waits.nudge(wait!.fingerprint)).toBe(1);
    await new Promise((r) => setTimeout(r, 20));
    expect(waits.size).toBe(1);
    await rt.approvals.record({
      fingerprint: wait!.fingerprint,
      decision: "approved",
      required_tier: "full_access",
      reviewer: "alice",
      decided_at: Date.now(),
      expires_at: null,
    });
    waits.nudge(wait!.fingerprint);
    const r = await running;
    expect(r.results[0]!.status).toBe("succeeded");
    expect(calls).toEqual(["send_email"]);
    expect(requested).toHaveLength(1);
    expect(resolved).toEqual(["allow by alice"]);
    const decided = rt.events.query({ proposal_id: "w1", kinds: ["approval_decided"] })[0]!;
    expect(decided.data).toMatchObject({ decision: "allow", reviewer: "alice" });
  });

  it("is rejected at the deadline, and when the run is cancelled", async () => {
    const waits = new ApprovalWaits(undefined, 20);
    const { rt, calls } = runtime();
    const late = await rt.executeProposal({ id: "w2", actions: [send] }, undefined, { approvalWait: { waits, timeoutMs: 150, asked_by: "t" } });
    expect(late.results[0]!.error).toContain("no decision within 150 ms");
    const cancel = new AbortController();
    const running = rt.executeProposal({ id: "w3", actions: [send] }, undefined, {
      signal: cancel.signal,
      approvalWait: { waits, timeoutMs: 20_000, asked_by: "t" },
    });
    await expect.poll(() => waits.size).toBe(1);
    cancel.abort();
    expect((await running).results[0]!.status).toBe("rejected");
    expect(waits.size).toBe(0);
    expect(calls).toEqual([]);
    expect(rt.events.query({ proposal_id: "w2", kinds: ["approval_decided"] })[0]!.data).toMatchObject({ decision: "deny", reviewer: "timeout" });
  });

  it("a resolved form that needs its own approval waits at dispatch (DECISIONS §22), the read before it having run", async () => {
    const waits = new ApprovalWaits(undefined, 10_000);
    const base = new Runtime();
    const gate = new ApprovalGate({ ledger: base.approvals, sessionId: "s" });
    const rt = new Runtime({ store: base.store, approvalGate: gate });
    const sent: unknown[] = [];
    rt.registerTool({ name: "lookup" }, () => ({ to: "resolved@example.com" }));
    rt.registerTool({ name: "send_email" }, (p) => {
      sent.push(p["to"]);
      return "sent";
    });
    const proposal = {
      id: "d1",
      actions: [
        { id: "l", type: "tool_call" as const, tool: "lookup", parameters: { q: "x" } },
        { id: "s", type: "tool_call" as const, tool: "send_email", parameters: { to: "$l.output.to" }, dependencies: ["l"] },
      ],
    };
    const running = rt.executeProposal(proposal, undefined, { approvalWait: { waits, timeoutMs: 20_000, asked_by: "t" } });
    // The template is full_access: admission waits on it first.
    await expect.poll(() => waits.list().map((w) => w.action_id)).toEqual(["s"]);
    const template = waits.list()[0]!;
    await rt.approvals.record({
      fingerprint: template.fingerprint,
      decision: "approved",
      required_tier: "full_access",
      reviewer: "ops",
      decided_at: Date.now(),
      expires_at: null,
    });
    waits.nudge(template.fingerprint);
    // Then the resolved form, a different operation, waits at dispatch: nothing sent yet.
    await expect.poll(() => waits.list().filter((w) => w.fingerprint !== template.fingerprint).length).toBe(1);
    const resolved = waits.list().find((w) => w.fingerprint !== template.fingerprint)!;
    expect(sent).toEqual([]);
    await rt.approvals.record({
      fingerprint: resolved.fingerprint,
      decision: "approved",
      required_tier: "full_access",
      reviewer: "ops",
      decided_at: Date.now(),
      expires_at: null,
    });
    waits.nudge(resolved.fingerprint);
    const r = await running;
    expect(r.results.map((x) => x.status)).toEqual(["succeeded", "succeeded"]);
    expect(sent).toEqual(["resolved@example.com"]);
    const decided = rt.events.query({ proposal_id: "d1", kinds: ["approval_decided"] }).map((e) => e.data["reviewer"]);
    expect(decided).toEqual(["ops", "ops"]);
  });
});
