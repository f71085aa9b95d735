import { proposalInputSchema } from "@car/ir";
import { Runtime } from "@car/engine";
import { runPlanLoop } from "@car/engine/planner";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { aiSdkPlanner } from "./plan.ts";

/** A mock model answering with the given JSON texts in turn, as a provider's structured output would. */
function scriptedModel(answers: unknown[]): MockLanguageModelV3 {
  let call = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => ({
      content: [{ type: "text", text: JSON.stringify(answers[call++]) }],
      finishReason: { unified: "stop", raw: "stop" },
      usage: {
        inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 10, text: 10, reasoning: 0 },
      },
      warnings: [],
    }),
  });
}

describe("the planner loop with the AI SDK's structured output", () => {
  it("asks for the input-proposal schema, feeds failures back into the prompt, and runs the corrected plan", async () => {
    const rt = new Runtime();
    const sent: string[] = [];
    rt.registerTool(
      { name: "fetch_page", description: "Download a page", parameters: { type: "object", properties: { url: { type: "string" } }, required: ["url"] } },
      (p) => ({
        body: `<html>${String(p["url"])}</html>`,
      }),
    );
    rt.registerTool({ name: "send_summary", parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } }, (p) => {
      sent.push(JSON.stringify(p["text"]));
      return { sent: true };
    });
    const model = scriptedModel([
      // First try: calls a tool that does not exist.
      { actions: [{ id: "get", type: "tool_call", tool: "http_get", parameters: { url: "https://example.com" } }] },
      // Second try: a valid two-step plan passing the page on.
      {
        actions: [
          { id: "get", type: "tool_call", tool: "fetch_page", parameters: { url: "https://example.com" } },
          { id: "send", type: "tool_call", tool: "send_summary", parameters: { text: "$get.output.body" }, dependencies: ["get"] },
        ],
      },
    ]);

    const result = await runPlanLoop({ runtime: rt, task: "summarise example.com", propose: aiSdkPlanner(model), maxAttempts: 3 });

    expect(result.outcome).toBe("succeeded");
    expect(result.attempts.map((a) => a.verdict)).toEqual(["verification_failed", "succeeded"]);
    expect(sent).toEqual([JSON.stringify("<html>https://example.com</html>")]);
    expect(model.doGenerateCalls).toHaveLength(2);
    // Structured output was requested with @car/ir's input schema.
    const format = model.doGenerateCalls[0]!.responseFormat;
    expect(format).toMatchObject({ type: "json", name: "ActionProposal" });
    expect(format?.type === "json" ? format.schema : undefined).toEqual(proposalInputSchema);
    // The second prompt carries verify's finding about the first plan.
    const secondPrompt = JSON.stringify(model.doGenerateCalls[1]!.prompt);
    expect(secondPrompt).toContain("http_get");
    expect(secondPrompt).toContain("verify rejected it");
    expect(JSON.stringify(model.doGenerateCalls[0]!.prompt)).toContain("fetch_page");
  });

  it("turns a model answer that does not fit the schema into a retried attempt, not a crash", async () => {
    const rt = new Runtime();
    rt.registerTool("noop", () => ({}));
    const model = scriptedModel([{ steps: ["not", "a", "proposal"] }, { actions: [{ id: "a", type: "tool_call", tool: "noop" }] }]);
    const result = await runPlanLoop({ runtime: rt, task: "t", propose: aiSdkPlanner(model) });
    expect(result.attempts.map((a) => a.verdict)).toEqual(["invalid_proposal", "succeeded"]);
    expect(result.attempts[0]!.feedback).toMatchObject({ verdict: "invalid_proposal" });
  });
});
