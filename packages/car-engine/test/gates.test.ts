import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseProposal } from "@car/ir";
import { ApprovalGate, type ApprovalGateOptions } from "@car/policy";
import { describe, expect, it } from "vitest";
import { type ManualTimers, Runtime, manualTimers } from "../src/index.ts";
import { fakeRuntime, tc } from "./helpers.ts";

describe("project policy discovery", () => {
  it("loads CAR_HOME policies and every .car/policies from the repository root down to cwd", async () => {
    const root = mkdtempSync(join(tmpdir(), "car-engine-project-"));
    try {
      const home = join(root, "home");
      mkdirSync(join(home, "policies"), { recursive: true });
      writeFileSync(join(home, "policies", "op.toml"), 'deny_tool = ["wipe"]\n');
      const repo = join(root, "repo");
      mkdirSync(join(repo, ".git"), { recursive: true });
      mkdirSync(join(repo, ".car", "policies"), { recursive: true });
      writeFileSync(join(repo, ".car", "policies", "repo.toml"), 'deny_tool = ["deploy"]\n');
      const sub = join(repo, "pkg", "deep");
      mkdirSync(sub, { recursive: true });
      const { rt } = fakeRuntime();
      rt.registerTool("deploy", () => 1);
      rt.registerTool("wipe", () => 1);
      expect(rt.loadProjectPolicies(sub, { carHome: home, stateRoots: [home] })).toBe(2);
      const r = await rt.executeProposal({ actions: [tc("d", "deploy", { failure_behavior: "skip" }), tc("w", "wipe", { failure_behavior: "skip" })] });
      expect(r.results.map((x) => x.status)).toEqual(["rejected", "rejected"]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

/** A runtime on fake time whose approval gate (on the runtime's own ledger) is built from `options`. */
function gatedRuntime(options: Omit<ApprovalGateOptions, "ledger" | "sessionId">): { rt: Runtime; timers: ManualTimers; gate: ApprovalGate } {
  const timers = manualTimers(1_700_000_000_000);
  const rt0 = new Runtime({ clock: timers, timers });
  const gate = new ApprovalGate({ ledger: rt0.approvals, sessionId: "s", clock: timers, timers, ...options });
  return { rt: new Runtime({ clock: timers, timers, store: rt0.store, approvalGate: gate }), timers, gate };
}

describe("approval gate", () => {
  it("asks the approver for actions above the granted tier, records the decision and rejects on deny", async () => {
    const asked: string[] = [];
    const { rt, timers } = gatedRuntime({
      grantedTier: "read_only",
      approver: async (req) => {
        asked.push(req.action.id);
        return req.action.id === "ok" ? "approve" : "deny";
      },
    });
    rt.registerTool({ name: "write_file" }, () => "written");
    const r = await timers.settle(
      rt.executeProposal({
        actions: [tc("ok", "write_file", { parameters: { path: "a" } }), tc("no", "write_file", { parameters: { path: "b" }, failure_behavior: "skip" })],
      }),
    );
    expect(asked.sort()).toEqual(["no", "ok"]);
    // One refusal blocks the whole proposal at admission (DECISIONS §16): nothing ran.
    expect(r.results.map((x) => x.status)).toEqual(["rejected", "rejected"]);
    expect(r.results[1]!.error).toMatch(/^denied by approval gate: fingerprint [0-9a-f]+ requires sandbox_edit, granted read_only/);
    expect(rt.events.query({ kinds: ["action_started"] })).toHaveLength(0);
    expect((await rt.approvals.list()).map((a) => a.decision).sort()).toEqual(["approved", "rejected"]);
    // Both waits are closed on the record: the approval as well as the refusal.
    expect(rt.events.query({ kinds: ["approval_decided"] }).map((e) => [e.action_id, e.data["decision"], e.data["reviewer"]])).toEqual([
      ["ok", "allow", "approver"],
      ["no", "deny", "approver"],
    ]);
  });

  it("puts each wait for the approver on the record: approval_requested before asking, approval_decided closing it, before anything runs", async () => {
    const delays: Record<string, number> = { w: 1_500, s: 250 };
    const { rt, timers } = gatedRuntime({
      grantedTier: "read_only",
      approver: (req) =>
        new Promise((resolve) => timers.setTimeout(() => resolve({ decision: "approve", reviewer: `alice:${req.action.id}` }), delays[req.action.id]!)),
    });
    rt.registerTool({ name: "read_file" }, () => "text");
    rt.registerTool({ name: "write_file" }, () => "ok");
    rt.registerTool({ name: "send_email" }, () => "sent");
    const r = await timers.settle(
      rt.executeProposal({
        id: "waits",
        actions: [
          tc("r", "read_file", { parameters: { path: "a" } }),
          tc("w", "write_file", { parameters: { path: "secret-path.txt" } }),
          tc("s", "send_email", { parameters: { to: "someone@example.com" } }),
        ],
      }),
    );
    expect(r.results.map((x) => x.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
    const log = rt.events.query({ proposal_id: "waits" });
    const trail = log.filter((e) => e.kind.startsWith("approval_") || e.kind === "action_started").map((e) => `${e.kind} ${e.action_id}`);
    // Asked one at a time at admission, each wait closed before the next opens, and nothing starts before the last answer.
    expect(trail.slice(0, 4)).toEqual(["approval_requested w", "approval_decided w", "approval_requested s", "approval_decided s"]);
    expect(trail.slice(4).sort()).toEqual(["action_started r", "action_started s", "action_started w"]);
    const requested = log.filter((e) => e.kind === "approval_requested");
    const decided = log.filter((e) => e.kind === "approval_decided");
    const fp = (id: string) => decided.find((e) => e.action_id === id)!.data["fingerprint"];
    const run_id = log[0]!.data["run_id"];
    expect(requested.map((e) => e.data)).toEqual([
      { fingerprint: fp("w"), required: "sandbox_edit", granted: "read_only", stage: "admission", tool: "write_file", run_id },
      { fingerprint: fp("s"), required: "full_access", granted: "read_only", stage: "admission", tool: "send_email", run_id },
    ]);
    // Never a parameter value in the wait's events.
    expect(JSON.stringify([...requested, ...decided])).not.toMatch(/secret-path|someone@example/);
    expect(decided.map((e) => [e.action_id, e.data["decision"], e.data["reviewer"], e.data["wait_ms"]])).toEqual([
      ["w", "allow", "alice:w", 1_500],
      ["s", "allow", "alice:s", 250],
    ]);
    // The events' own timestamps span the same wait.
    for (const [i, id] of ["w", "s"].entries()) expect(Date.parse(decided[i]!.timestamp) - Date.parse(requested[i]!.timestamp)).toBe(delays[id]);
  });

  it("a wait at dispatch (parameters with references) is on the record too, before the action starts", async () => {
    const { rt, timers } = gatedRuntime({
      // Within the standing tier as declared; its resolved content makes it full_access, so it is asked at dispatch.
      approver: (req) => new Promise((resolve) => timers.setTimeout(() => resolve(req.required_tier === "full_access" ? "deny" : "approve"), 700)),
    });
    rt.registerTool({ name: "read_file" }, () => "cleanup: rm -rf /srv/data");
    rt.registerTool({ name: "write_file" }, () => "written");
    const r = await timers.settle(
      rt.executeProposal({
        id: "later",
        actions: [
          tc("r", "read_file", { parameters: { path: "a" } }),
          tc("w", "write_file", { parameters: { path: "notes.txt", content: "$r.output" }, dependencies: ["r"] }),
        ],
      }),
    );
    expect(r.results.map((x) => x.status)).toEqual(["succeeded", "rejected"]);
    const trail = rt.events
      .query({ proposal_id: "later" })
      .filter((e) => e.action_id === "w")
      .map((e) => e.kind);
    // Admission let the declared form through without asking; the resolved form is asked about at dispatch.
    expect(trail.filter((k) => k.startsWith("approval_"))).toEqual(["approval_requested", "approval_decided"]);
    expect(trail).not.toContain("action_started");
    const last = rt.events.query({ proposal_id: "later", kinds: ["approval_decided"] }).at(-1)!;
    expect(last.data).toMatchObject({ decision: "deny", required: "full_access", reviewer: "approver", wait_ms: 700 });
    expect(JSON.stringify(rt.events.query({ proposal_id: "later", kinds: ["approval_requested", "approval_decided"] }))).not.toContain("/srv/data");
  });

  it("a third action that needs approval blocks the whole proposal; after approval the same proposal runs", async () => {
    const { rt, timers, gate } = gatedRuntime({});
    const called: string[] = [];
    rt.registerTool({ name: "read_file" }, (p) => (called.push(`read ${p["path"]}`), "text"));
    rt.registerTool({ name: "write_file" }, (p) => (called.push(`write ${p["path"]}`), "ok"));
    rt.registerTool({ name: "send_email" }, () => (called.push("send"), "sent"));
    const proposal = {
      id: "p",
      actions: [
        tc("r", "read_file", { parameters: { path: "a" } }),
        tc("w", "write_file", { parameters: { path: "b" }, dependencies: ["r"], expected_effects: { written: true } }),
        tc("s", "send_email", { parameters: { to: "x@y.z" }, dependencies: ["w"] }),
      ],
    };
    const blocked = await rt.executeProposal(proposal);
    expect(called).toEqual([]);
    expect(blocked.results.map((x) => x.status)).toEqual(["rejected", "rejected", "rejected"]);
    expect(rt.state.exists("written")).toBe(false);
    // The error names the fingerprint with required and granted tier, so approval can be driven straight off it.
    const named = /^needs approval: fingerprint ([0-9a-f]+) requires full_access, granted sandbox_edit/.exec(blocked.results[2]!.error!);
    expect(named).not.toBeNull();
    const fingerprint = named![1]!;
    expect((await gate.evaluate(parseProposal(proposal).actions[2]!)).fingerprint).toBe(fingerprint);
    expect(blocked.results[0]!.error).toContain(fingerprint);
    // An operator approves the fingerprint (permission.approve / car approvals): the re-submission runs everything.
    await rt.approvals.record({
      fingerprint,
      decision: "approved",
      required_tier: "full_access",
      reviewer: "conn:ops",
      decided_at: timers.now(),
      expires_at: null,
    });
    const ran = await rt.executeProposal({ ...proposal, id: "p2" });
    expect(ran.results.map((x) => x.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
    expect(called).toEqual(["read a", "write b", "send"]);
  });

  it("an approval of an action with output references does not cover a resolved form above the standing tier (DECISIONS §22); one of its own does", async () => {
    const timers = manualTimers();
    const rt0 = new Runtime({ clock: timers, timers });
    const gate = new ApprovalGate({ ledger: rt0.approvals, sessionId: "s", clock: timers, timers });
    const rt = new Runtime({ clock: timers, timers, store: rt0.store, approvalGate: gate });
    const sent: unknown[] = [];
    rt.registerTool({ name: "read_file" }, () => ({ to: "x@y.z" }));
    rt.registerTool({ name: "send_email" }, (p) => {
      sent.push(p["to"]);
      return "sent";
    });
    const proposal = {
      id: "p",
      actions: [tc("r", "read_file", { parameters: { path: "a" } }), tc("s", "send_email", { parameters: { to: "$r.output.to" }, dependencies: ["r"] })],
    };
    const send = parseProposal(proposal).actions[1]!;
    const template = await gate.evaluate(send);
    const resolved = await gate.evaluate({ ...send, parameters: { to: "x@y.z" } });
    expect(resolved.fingerprint).not.toBe(template.fingerprint);
    const decide = (fingerprint: string, decision: "approved" | "rejected") =>
      rt.approvals.record({ fingerprint, decision, required_tier: "full_access", reviewer: "conn:ops", decided_at: timers.now(), expires_at: null });
    await decide(template.fingerprint, "approved");
    // send_email is full_access: approving the template is not approving whatever it resolves to.
    const unapproved = await rt.executeProposal(proposal);
    expect(unapproved.results[1]).toMatchObject({ status: "rejected", error: expect.stringMatching(/^denied by approval gate: /) });
    expect(sent).toEqual([]);
    await decide(resolved.fingerprint, "approved");
    const ran = await rt.executeProposal({ ...proposal, id: "p1" });
    expect(ran.results.map((x) => x.status)).toEqual(["succeeded", "succeeded"]);
    expect(sent).toEqual(["x@y.z"]);
    // A newer decision recorded on the resolved operation wins.
    await decide(resolved.fingerprint, "rejected");
    const refused = await rt.executeProposal({ ...proposal, id: "p2" });
    expect(refused.results[1]).toMatchObject({ status: "rejected", error: "denied by approval gate: rejected by conn:ops" });
    expect(sent).toEqual(["x@y.z"]);
  });
});
