/**
 * The @car/ir README's model-output flow, run as written: a model's JSON
 * matching `proposalInputSchema`, typed with the input type, parsed,
 * verified and executed.
 */
import { compileSchema, parseProposal, proposalInputSchema, type ActionProposalInput } from "@car/ir";
import { describe, expect, it } from "vitest";
import { Runtime } from "../src/index.ts";

const reply = JSON.stringify({
  actions: [
    { id: "read", type: "tool_call", tool: "read_file", parameters: { path: "notes.txt" } },
    { id: "sum", type: "tool_call", tool: "summarize", parameters: { text: "$read.output.content" }, dependencies: ["read"] },
  ],
});

describe("a model's proposal, from JSON to results", () => {
  it("validates against the structured-output schema, parses, verifies and executes", async () => {
    const fromModel: ActionProposalInput = JSON.parse(reply) as ActionProposalInput;
    expect(compileSchema(proposalInputSchema)(JSON.parse(reply)).ok).toBe(true);
    const proposal = parseProposal(fromModel);
    const rt = new Runtime();
    rt.registerTool("read_file", async ({ path }) => ({ content: `text of ${String(path)}` }));
    rt.registerTool("summarize", async ({ text }) => ({ summary: String(text).slice(0, 7) }));
    const report = rt.verifyProposal(proposal);
    expect(report).toMatchObject({ valid: true, issues: [] });
    const result = await rt.executeProposal(proposal);
    expect(result.results.map((r) => r.status)).toEqual(["succeeded", "succeeded"]);
    expect(result.results[1]!.output).toEqual({ summary: "text of" });
  });
});
