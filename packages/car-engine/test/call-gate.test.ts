/**
 * One call gate at dispatch (src/gates/call-gate.ts): a forward action and
 * a compensation step that meet the same rule are refused in the same
 * words, with the same events — a policy, a trace rule; the approval
 * gate's verdict on either is said in its one sentence.
 */
import { ApprovalGate } from "@car/policy";
import { describe, expect, it } from "vitest";
import { manualTimers, Runtime, type RuntimeOptions } from "../src/index.ts";
import { tc } from "./helpers.ts";

/**
 * A proposal whose forward action calls `refund` and whose compensation (of
 * `charge`, once the forward refund is refused and the proposal aborts)
 * calls `refund` too: both meet whatever rule holds `refund`.
 */
const proposal = {
  id: "p",
  actions: [
    tc("charge", "charge", { reversibility: "compensable", compensation: { type: "tool", tool: "refund", parameters: { amount: 5 } } }),
    tc("refund", "refund", { parameters: { amount: 5 }, dependencies: ["charge"] }),
  ],
};

async function refusals(setup: (rt: Runtime) => void, options: RuntimeOptions = {}): Promise<{ forward: string; undo: string; rt: Runtime }> {
  const timers = manualTimers(1_700_000_000_000);
  const rt = new Runtime({ clock: timers, timers, rollback: "compensate", ...options });
  rt.registerTool({ name: "charge" }, () => "charged");
  rt.registerTool({ name: "refund" }, () => "refunded");
  setup(rt);
  const r = await rt.executeProposal(proposal);
  expect(r.results[1]!.status).toBe("rejected");
  const failed = rt.events.query({ kinds: ["compensation_failed"] });
  expect(failed.map((e) => e.action_id)).toEqual(["charge"]);
  expect(r.results[0]!.compensation_error).toBe(failed[0]!.data["error"]);
  return { forward: r.results[1]!.error!, undo: String(failed[0]!.data["error"]), rt };
}

describe("the one call gate", () => {
  it("a policy refuses a compensation step and a forward action in the same words", async () => {
    const { forward, undo, rt } = await refusals((rt) => rt.registerPolicy({ name: "no_refunds", rule: "deny_tool", target: "refund" }));
    expect(forward).toMatch(/^denied by policy: no_refunds: /);
    expect(undo).toBe(forward);
    const violations = rt.events.query({ kinds: ["policy_violation"] });
    // Both in the one run: the forward refusal and its compensation's.
    const run_id = rt.events.query({ kinds: ["proposal_received"] })[0]!.data["run_id"];
    expect(violations.map((e) => [e.action_id, e.data])).toEqual([
      ["refund", { policy_name: "no_refunds", reason: expect.any(String), run_id }],
      ["charge", { policy_name: "no_refunds", reason: violations[0]!.data["reason"], compensation: true, run_id }],
    ]);
  });

  it("a trace rule refuses a compensation step and a forward action in the same words", async () => {
    const { forward, undo } = await refusals((rt) =>
      rt.registerPolicy({ name: "audit_first", rule: "trace_rule", trace: { kind: "only_after", tool: "refund", after: "audit" } }),
    );
    expect(forward).toMatch(/^denied by policy: audit_first: /);
    expect(undo).toBe(forward);
  });

  it("the approval gate's refusal of a compensation step and of a resolved forward form is said the same way", async () => {
    const timers = manualTimers(1_700_000_000_000);
    const base = new Runtime({ clock: timers, timers });
    const approvalGate = new ApprovalGate({ ledger: base.approvals, sessionId: "s", clock: timers, timers, approver: async () => "deny" });
    const rt = new Runtime({ clock: timers, timers, store: base.store, approvalGate, rollback: "compensate" });
    rt.registerTool({ name: "read_file" }, () => "rm -rf /srv/data");
    rt.registerTool({ name: "note" }, () => "noted");
    // `note` as declared is within the standing tier; what its reference resolves to is not, nor is the undo.
    const r = await timers.settle(
      rt.executeProposal({
        actions: [
          tc("r", "read_file", {
            parameters: { path: "a" },
            reversibility: "compensable",
            compensation: { type: "tool", tool: "note", parameters: { text: "rm -rf /srv/data" } },
          }),
          tc("n", "note", { parameters: { text: "$r.output" }, dependencies: ["r"] }),
        ],
      }),
    );
    expect(r.results[1]!.status).toBe("rejected");
    // Each refusal is the gate's verdict on that call, in the one sentence for it.
    const said = (e: { data: Record<string, unknown> }) => `denied by approval gate: ${String(e.data["reason"] ?? `requires ${String(e.data["required"])}`)}`;
    const decided = rt.events.query({ kinds: ["approval_decided"] }).filter((e) => e.data["decision"] !== "allow");
    expect(decided.map((e) => [e.action_id, e.data["compensation"]])).toEqual([
      ["n", undefined],
      ["r", true],
    ]);
    expect(r.results[1]!.error).toBe(said(decided[0]!));
    expect(r.results[0]!.compensation_error).toBe(said(decided[1]!));
  });
});
