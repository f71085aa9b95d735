import { describe, expect, it } from "vitest";
import { type ActionProposalInput, parseProposalWithGraph } from "@car/ir";
import { Runtime } from "../src/index.ts";

describe("Runtime.verifyProposal", () => {
  it("verifies against the registered tools and the live state, without running anything", async () => {
    const rt = new Runtime();
    let calls = 0;
    rt.registerTool({ name: "deploy", parameters: { type: "object", properties: { env: { type: "string" } }, required: ["env"] } }, () => {
      calls++;
      return { ok: true };
    });
    rt.state.set("tests_passed", true);
    const proposal: ActionProposalInput = {
      actions: [
        { id: "d", type: "tool_call", tool: "deploy", parameters: { env: "staging" }, preconditions: [{ key: "tests_passed", value: true }] },
        { id: "x", type: "tool_call", tool: "nope", parameters: {} },
        { id: "bad", type: "tool_call", tool: "deploy", parameters: { env: 3 } },
      ],
    };
    const report = rt.verifyProposal(proposal);
    expect(report.valid).toBe(false);
    const byAction = (id: string) => report.issues.filter((i) => i.action_id === id && i.severity === "error");
    expect(byAction("d")).toEqual([]);
    expect(byAction("x")[0]?.message).toContain("not registered");
    expect(byAction("bad")[0]?.message).toContain("/env");
    expect(calls).toBe(0);

    rt.state.set("tests_passed", false);
    const gated = rt.verifyProposal({ actions: [proposal.actions[0]!] });
    expect(gated.valid).toBe(false);
    expect(gated.issues[0]?.message).toContain("tests_passed");
  });
});

describe("one static gate", () => {
  it("verify reports, and admission rejects with, the same findings in the same words", async () => {
    const rt = new Runtime();
    rt.registerTool({ name: "deploy", parameters: { type: "object", properties: { env: { type: "string" } }, required: ["env"] } }, () => ({ ok: true }));
    const proposal: ActionProposalInput = {
      id: "p",
      actions: [
        { id: "x", type: "tool_call", tool: "nope", parameters: {} },
        { id: "bad", type: "tool_call", tool: "deploy", parameters: { env: 3 } },
        { id: "w", type: "state_write", parameters: { value: 1 } },
        { id: "ok", type: "tool_call", tool: "deploy", parameters: { env: "qa" } },
      ],
    };
    const issues = rt.verifyProposal(proposal).issues.filter((i) => i.severity === "error");
    const result = await rt.executeProposal(proposal);
    const rejected = result.results.filter((r) => r.status === "rejected" && !r.error!.startsWith("not run"));
    expect(rejected.map((r) => r.action_id)).toEqual(["x", "bad", "w"]);
    for (const r of rejected) {
      const own = issues.filter((i) => i.action_id === r.action_id).map((i) => i.message);
      expect(own).toEqual([`action '${r.action_id}': ${r.error}`]);
    }
    expect(result.results.find((r) => r.action_id === "ok")!.error).toMatch(/^not run: the proposal was rejected at admission/);
  });
});

describe("parse once", () => {
  it("runs the pair parseProposalWithGraph returned as it is, and parses a look-alike as input", async () => {
    const rt = new Runtime();
    rt.registerTool("t", () => 1);
    const pair = parseProposalWithGraph({ id: "once", actions: [{ id: "a", type: "tool_call", tool: "t" }] });
    const result = await rt.executeProposal(pair);
    expect(result.results.map((r) => r.status)).toEqual(["succeeded"]);
    // The runtime received the very proposal object parsed above: no second parse made a copy.
    expect(rt.events.query({ kinds: ["proposal_received"] })[0]!.data["proposal"]).toBe(pair.proposal);
    await expect(rt.executeProposal({ ...pair })).rejects.toMatchObject({ code: "invalid_proposal" });
  });
});
