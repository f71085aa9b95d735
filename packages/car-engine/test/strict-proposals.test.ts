/**
 * DECISIONS §25 through the library's Runtime: a misspelt proposal field is a
 * warning with a did-you-mean from `verifyProposal`, and `strict: true`
 * refuses it (typed `invalid_proposal`) before anything runs.
 */
import { describe, expect, it } from "vitest";
import { isCarError, type ProposalInput } from "@car/ir";
import { Runtime } from "../src/index.ts";

// As JSON from a model arrives: TypeScript callers get the typo flagged by the compiler already.
const typo = {
  actions: [
    { id: "w", type: "state_write", parameters: { key: "k", value: 1 } },
    { id: "t", type: "tool_call", tool: "t", dependecies: ["w"] },
  ],
} as unknown as ProposalInput;

describe("Runtime and fields the spec does not name", () => {
  it("verifyProposal warns with a did-you-mean; strict throws invalid_proposal", () => {
    const runtime = new Runtime();
    runtime.registerTool("t", () => "ok");
    expect(runtime.verifyProposal(typo).issues).toContainEqual(
      expect.objectContaining({ action_id: "t", severity: "warning", message: expect.stringContaining("did you mean 'dependencies'?") }),
    );
    expect(() => runtime.verifyProposal(typo, { strict: true })).toThrow(expect.objectContaining({ code: "invalid_proposal" }));
  });

  it("executeProposal with strict refuses it and nothing runs or lands; without strict the field is kept and not acted on", async () => {
    const runtime = new Runtime();
    let calls = 0;
    runtime.registerTool("t", () => ++calls);
    let refused: unknown;
    try {
      await runtime.executeProposal(typo, undefined, { strict: true });
    } catch (error) {
      refused = error;
    }
    expect(isCarError(refused) && refused.code).toBe("invalid_proposal");
    expect(isCarError(refused) && refused.details.problems).toEqual([
      { pointer: "/actions/1/dependecies", message: "unknown field 'dependecies' — did you mean 'dependencies'?" },
    ]);
    expect(calls).toBe(0);
    expect(runtime.state.snapshot()).toEqual({});
    await expect(runtime.executeProposal(typo, undefined, { strict: "yes" as unknown as boolean })).rejects.toMatchObject({ code: "invalid_params" });
    const result = await runtime.executeProposal(typo);
    expect(result.results.map((r) => r.status)).toEqual(["succeeded", "succeeded"]);
    expect(calls).toBe(1);
    await runtime.close();
  });
});
