import { describe, expect, it } from "vitest";
import { parseProposal, serializeActionResult, serializeProposalResult, setOwn, stringifyProposal, type ActionResult } from "./index.ts";

const result: ActionResult = {
  action_id: "a1",
  status: "failed",
  output: null,
  error: "boom",
  state_changes: { k: { op: "set", value: null }, gone: { op: "delete" } },
  duration_ms: 3,
  timestamp: "2026-05-02T12:00:01Z",
};

describe("serializeActionResult", () => {
  it("omits terminal and rolled_back unless true", () => {
    const wire = serializeActionResult(result);
    expect(Object.keys(wire)).toEqual(["action_id", "status", "output", "error", "state_changes", "duration_ms", "timestamp"]);
    const marked = serializeActionResult({ ...result, terminal: true, rolled_back: true });
    expect(marked["terminal"]).toBe(true);
    expect(marked["rolled_back"]).toBe(true);
  });

  it("re-emits unknown fields", () => {
    const extended = { ...result };
    setOwn(extended as unknown as Record<string, unknown>, "attempts", 2);
    expect(serializeActionResult(extended)["attempts"]).toBe(2);
  });
});

describe("serializeProposalResult", () => {
  it("writes results and cost", () => {
    const cost = { tool_calls: 1, actions_executed: 1, actions_rejected: 0, actions_skipped: 0, total_duration_ms: 3, retries: 0 };
    expect(serializeProposalResult({ proposal_id: "p", results: [result], cost })).toEqual({
      proposal_id: "p",
      results: [serializeActionResult(result)],
      cost,
    });
  });
});

describe("serializeAction omissions", () => {
  it("omits tool, compensation and timeout_ms when absent, writes them when present", () => {
    const text = stringifyProposal(parseProposal({ actions: [{ id: "a", type: "assertion", tool: null, compensation: null, timeout_ms: null }] }));
    expect(text).not.toMatch(/"tool"|"compensation"|"timeout_ms"/);
    const full = stringifyProposal(
      parseProposal({
        actions: [{ id: "a", type: "tool_call", tool: "t", reversibility: "compensable", compensation: { type: "action_ref", action_id: "a" }, timeout_ms: 9 }],
      }),
    );
    expect(full).toContain('"tool":"t"');
    expect(full).toContain('"compensation":{"type":"action_ref","action_id":"a"}');
    expect(full).toContain('"timeout_ms":9');
  });
});
