import { describe, expect, it } from "vitest";
import { parseProposal } from "@car/ir";
import { verify } from "./index.ts";

const echo = { name: "echo", parameters: { type: "object", properties: { msg: { type: "string" } }, required: ["msg"] } };
const call = (id: string, params: object = { msg: "hi" }, dependencies: string[] = []) => ({
  id,
  type: "tool_call",
  tool: "echo",
  parameters: params,
  dependencies,
});

function checkOf(result: ReturnType<typeof verify>, name: string) {
  const found = result.evidence!.checks.find((c) => c.name === name);
  expect(found, name).toBeDefined();
  return found!;
}

describe("verify's evidence block", () => {
  it("declares every check with its scope, and counts each finding against the check that made it", () => {
    const result = verify({ actions: [call("a", { msg: 5 }), call("b"), call("c"), call("d")] }, { tools: [echo] });
    const names = result.evidence!.checks.map((c) => c.name);
    expect(names).toEqual(
      expect.arrayContaining(["dependency_graph", "state_walk", "write_conflicts", "static_gate", "param_schema", "repeated_calls", "compensation"]),
    );
    for (const c of result.evidence!.checks) {
      expect(c.verifies.length, c.name).toBeGreaterThan(0);
      expect(c.cannot_verify.length, c.name).toBeGreaterThan(0);
    }
    expect(checkOf(result, "param_schema")).toMatchObject({ ran: true, findings: 1, tier: "decision_procedure" });
    // Three identical calls look like a loop: the heuristic check made that finding, with its tier.
    expect(checkOf(result, "repeated_calls")).toMatchObject({ ran: true, findings: 1, tier: "heuristic" });
    const total = result.evidence!.checks.reduce((sum, c) => sum + c.findings, 0);
    expect(total).toBe(result.issues.length);
    // A finding carries the tier of the check that made it.
    expect(result.issues.find((i) => i.tier === "heuristic")).toBeDefined();
  });

  it("reports param_schema as not run without tools, names the unchecked calls, and lowers confidence", () => {
    const withTools = verify({ actions: [call("a"), call("b", { msg: "x" })] }, { tools: [echo] });
    const without = verify({ actions: [call("a"), call("b", { msg: "x" })] });
    expect(checkOf(withTools, "param_schema").ran).toBe(true);
    expect(withTools.evidence!.confidence).toBe(1);
    expect(checkOf(without, "param_schema").ran).toBe(false);
    expect(without.evidence!.confidence).toBeLessThan(1);
    expect(without.evidence!.untested_regions.join("\n")).toContain("'a', 'b'");
    // A call whose parameters wait for another action's output is checked only at dispatch.
    const refs = verify({ actions: [call("a"), call("b", { msg: "$a.output" }, ["a"])] }, { tools: [echo] });
    expect(refs.evidence!.confidence).toBeLessThan(1);
    expect(refs.evidence!.untested_regions.join("\n")).toContain("'b'");
    expect(refs.evidence!.untested_regions.join("\n")).not.toContain("'a'");
    // Many unchecked calls: the first ten are named, the rest counted.
    const many = verify({ actions: Array.from({ length: 15 }, (_, i) => call(`c${i}`, { msg: `m${i}` })) });
    expect(many.evidence!.untested_regions.join("\n")).toContain("'c9' and 5 more");
  });

  it("says which checks could not run when the dependency graph cannot be built", () => {
    // A JSON copy of a parsed proposal, edited into a cycle: verify reports the graph instead of throwing.
    const copy = JSON.parse(JSON.stringify(parseProposal({ actions: [call("a", { msg: "x" }), call("b", { msg: "y" }, ["a"])] })));
    copy.actions[0].dependencies = ["b"];
    const result = verify(copy, { tools: [echo] });
    expect(result.valid).toBe(false);
    expect(checkOf(result, "dependency_graph")).toMatchObject({ ran: true });
    expect(checkOf(result, "dependency_graph").findings).toBeGreaterThan(0);
    expect(checkOf(result, "state_walk").ran).toBe(false);
    expect(result.evidence!.confidence).toBeLessThan(0.8);
    expect(result.evidence!.untested_regions.join("\n")).toContain("dependency graph could not be built");
  });

  it("keeps confidence a 0..1 coverage and states its assumptions", () => {
    const empty = verify({ actions: [] });
    expect(empty.evidence).toMatchObject({ confidence: 1, untested_regions: [] });
    expect(empty.evidence!.assumptions.join(" ")).toContain("declared effects");
    expect(empty.evidence!.residual_risks.length).toBeGreaterThan(0);
    const limited = verify({ actions: [call("a")] }, { maxActions: 0 });
    expect(checkOf(limited, "action_limit")).toMatchObject({ ran: true, findings: 1 });
    expect(checkOf(empty, "action_limit").ran).toBe(false);
  });
});
