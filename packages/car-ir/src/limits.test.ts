import { describe, expect, it } from "vitest";
import { isCarError } from "./errors.ts";
import { DEFAULT_PROPOSAL_LIMITS } from "./limits.ts";
import { parseProposal } from "./parse-proposal.ts";

function refusal(f: () => unknown) {
  try {
    f();
  } catch (error) {
    if (isCarError(error)) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

const actions = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `a${i}`, type: "tool_call", tool: "t" }));

describe("proposal size limits", () => {
  it("refuses more actions than max_proposal_actions with invalid_proposal naming the limit", () => {
    const error = refusal(() => parseProposal({ actions: actions(4) }, { limits: { maxActions: 3 } }));
    expect(error.code).toBe("invalid_proposal");
    expect(error.message).toBe("proposal has 4 actions, over the limit of 3 (max_proposal_actions)");
    expect(parseProposal({ actions: actions(3) }, { limits: { maxActions: 3 } }).actions).toHaveLength(3);
  });

  it("refuses JSON text longer than max_proposal_bytes before parsing it", () => {
    const text = JSON.stringify({ actions: actions(2) });
    const error = refusal(() => parseProposal(`${text} {not json`, { limits: { maxBytes: text.length } }));
    expect(error.code).toBe("invalid_proposal");
    expect(error.message).toBe(`proposal text is ${text.length + 10} characters, over the limit of ${text.length} (max_proposal_bytes)`);
    expect(parseProposal(text, { limits: { maxBytes: text.length } }).actions).toHaveLength(2);
  });

  it("applies the defaults when no limits are given", () => {
    expect(DEFAULT_PROPOSAL_LIMITS.maxActions).toBeGreaterThanOrEqual(1_000_000);
    const over = DEFAULT_PROPOSAL_LIMITS.maxActions + 1;
    const error = refusal(() => parseProposal(`{"actions":[${"0,".repeat(over - 1)}0]}`));
    expect(error.code).toBe("invalid_proposal");
    expect(error.message).toBe(`proposal has ${over} actions, over the limit of ${DEFAULT_PROPOSAL_LIMITS.maxActions} (max_proposal_actions)`);
  });
});
