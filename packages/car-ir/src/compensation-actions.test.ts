import { describe, expect, it } from "vitest";
import { compensationActionIndices, undoGap } from "./compensation-actions.ts";
import { parseProposal } from "./parse-proposal.ts";
import { rollbackContract } from "./state-sets.ts";

const p = parseProposal({
  actions: [
    { id: "push", type: "tool_call", tool: "git_push", reversibility: "compensable", compensation: { type: "action_ref", action_id: "unpush" } },
    { id: "unpush", type: "tool_call", tool: "git_force_push", dependencies: ["push"] },
    { id: "insert", type: "tool_call", tool: "db_insert", reversibility: "compensable", compensation: { type: "tool", tool: "db_delete" } },
    { id: "self", type: "tool_call", tool: "x", reversibility: "compensable", compensation: { type: "action_ref", action_id: "self" } },
    { id: "write", type: "state_write", parameters: { key: "k", value: 1 }, reversibility: "reversible" },
  ],
});
const index = new Map(p.actions.map((a, i) => [a.id, i]));

describe("compensation actions", () => {
  it("are exactly the actions another action names by action_ref (a self-reference marks nothing)", () => {
    expect([...compensationActionIndices(p.actions)]).toEqual([1]);
  });

  it("leave the rollback contract: the undo action's default 'irreversible' does not count", () => {
    expect(rollbackContract(p)).toBe("compensable");
    expect(rollbackContract({ actions: p.actions.slice(1, 2) })).toBe("irreversible");
  });
});

describe("undoGap", () => {
  it("names what stands between a ran action and its undo", () => {
    expect(p.actions.map((a) => undoGap(a, index))).toEqual([undefined, "irreversible", undefined, "broken_compensation", undefined]);
    const { compensation: _dropped, ...bare } = p.actions[2]!;
    expect(undoGap(bare, index)).toBe("missing_compensation");
    expect(undoGap({ ...p.actions[0]!, compensation: { type: "action_ref", action_id: "gone" } }, index)).toBe("broken_compensation");
  });
});
