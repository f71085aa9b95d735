/**
 * Run identity (DECISIONS §20): proposal-scoped trace facts belong to one
 * run, not to the proposer's `proposal.id`. Two proposals that share an id
 * neither share nor reset each other's `only_after` and `max_calls` facts.
 */
import { describe, expect, it } from "vitest";
import { Runtime } from "../src/index.ts";
import { tc } from "./helpers.ts";

/** A promise with its resolver, for holding a tool call open. */
function gate(): { wait: Promise<void>; open(): void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 2));
  if (!check()) throw new Error(`timed out waiting for ${what}`);
}

describe("two proposals with the same id", () => {
  it("do not share only_after: run_tests succeeding in one does not admit deploy in the other", async () => {
    const rt = new Runtime();
    const held = gate();
    const calls: string[] = [];
    rt.registerTool("run_tests", () => {
      calls.push("run_tests");
      return { ok: true };
    });
    rt.registerTool("hold", async () => {
      calls.push("hold");
      await held.wait;
      return { ok: true };
    });
    rt.registerTool("deploy", () => {
      calls.push("deploy");
      return { ok: true };
    });
    rt.registerPolicy({ name: "tests_first", rule: "trace_rule", trace: { kind: "only_after", tool: "deploy", after: "run_tests" } });
    const first = rt.executeProposal({ id: "same", actions: [tc("t", "run_tests"), tc("h", "hold", { dependencies: ["t"] })] });
    await until(() => calls.includes("hold"), "the first run to hold");
    const second = await rt.executeProposal({ id: "same", actions: [tc("d", "deploy")] });
    held.open();
    await first;
    expect(second.results[0]).toMatchObject({ status: "rejected" });
    expect(second.results[0]!.error).toMatch(/^denied by policy: tests_first:/);
    expect(calls).not.toContain("deploy");
  });

  it("do not reset max_calls: a same-id proposal ending mid-run leaves the running one's count in place", async () => {
    const rt = new Runtime();
    const held = gate();
    let notified = 0;
    rt.registerTool("notify", () => {
      notified += 1;
      return { ok: true };
    });
    rt.registerTool("hold", async () => {
      await held.wait;
      return { ok: true };
    });
    rt.registerTool("noop", () => ({ ok: true }));
    rt.registerPolicy({ name: "one_notify", rule: "trace_rule", trace: { kind: "max_calls", tool: "notify", max_calls: 1 } });
    const first = rt.executeProposal({
      id: "same",
      actions: [tc("n1", "notify"), tc("h", "hold", { dependencies: ["n1"] }), tc("n2", "notify", { dependencies: ["h"], failure_behavior: "skip" })],
    });
    await until(() => notified === 1, "the first notify");
    const other = await rt.executeProposal({ id: "same", actions: [tc("x", "noop")] });
    expect(other.results[0]!.status).toBe("succeeded");
    held.open();
    const result = await first;
    expect(result.results.map((r) => r.status)).toEqual(["succeeded", "succeeded", "rejected"]);
    expect(result.results[2]!.error).toMatch(/^denied by policy: one_notify:/);
    expect(notified).toBe(1);
  });

  it("each run gets its own run id, recorded on its proposal_received event", async () => {
    const rt = new Runtime();
    rt.registerTool("noop", () => ({ ok: true }));
    await rt.executeProposal({ id: "same", actions: [tc("x", "noop")] });
    await rt.executeProposal({ id: "same", actions: [tc("x", "noop")] });
    const runs = rt.events.query({ proposal_id: "same", kinds: ["proposal_received"] }).map((e) => e.data["run_id"]);
    expect(runs).toHaveLength(2);
    expect(runs[0]).toMatch(/^run-[0-9a-f]{12}$/);
    expect(runs[0]).not.toBe(runs[1]);
  });
});
