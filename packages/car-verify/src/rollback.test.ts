import { describe, expect, it } from "vitest";
import { proposal } from "../test/fixtures.ts";
import { verify } from "./verify.ts";

const tool = (id: string, extra: object = {}) => ({ id, type: "tool_call", tool: `t_${id}`, ...extra });

describe("verify: the rollback contract", () => {
  it("is fully undoable when every forward action is reversible or compensable with a compensation", () => {
    const result = verify(
      proposal([
        tool("a", { reversibility: "reversible" }),
        tool("b", { reversibility: "compensable", compensation: { type: "tool", tool: "undo_b" } }),
        tool("c", { reversibility: "compensable", compensation: { type: "action_ref", action_id: "undo_c" } }),
        // A compensation action: never runs forward, so its own (default irreversible) reversibility does not count.
        tool("undo_c", { dependencies: ["c"] }),
      ]),
    );
    expect(result.rollback_contract).toEqual({ declared: "compensable", fully_undoable: true, not_undoable: [] });
    expect(result.valid).toBe(true);
  });

  it("names every action an abort would leave in effect, and why", () => {
    const result = verify(
      proposal([
        tool("sent", {}),
        tool("half", { reversibility: "compensable" }),
        tool("broken", { reversibility: "compensable", compensation: { type: "action_ref", action_id: "nope" } }),
        tool("fine", { reversibility: "reversible" }),
      ]),
    );
    expect(result.rollback_contract).toEqual({
      declared: "irreversible",
      fully_undoable: false,
      not_undoable: [
        { action_id: "sent", reason: "irreversible" },
        { action_id: "half", reason: "missing_compensation" },
        { action_id: "broken", reason: "broken_compensation" },
      ],
    });
  });

  it("an empty proposal is reversible and fully undoable", () => {
    expect(verify(proposal([])).rollback_contract).toEqual({ declared: "reversible", fully_undoable: true, not_undoable: [] });
  });

  it("flags a forward action depending on a compensation action, a self-compensation, and a compensation that never runs", () => {
    const result = verify(
      proposal([
        tool("c", { reversibility: "compensable", compensation: { type: "action_ref", action_id: "undo" } }),
        tool("undo", { dependencies: ["c"] }),
        tool("after", { dependencies: ["undo"] }),
        tool("self", { reversibility: "compensable", compensation: { type: "action_ref", action_id: "self" } }),
        tool("irr", { compensation: { type: "tool", tool: "x" } }),
      ]),
    );
    expect(result.valid).toBe(false);
    expect(result.issues.map((i) => [i.action_id, i.severity, i.message])).toEqual([
      ["after", "error", "action 'after' depends on 'undo', a compensation action, which never runs forward"],
      ["self", "error", "action 'self' names itself as its compensation"],
      ["irr", "warning", "action 'irr' declares a compensation but is 'irreversible'; only 'compensable' actions are compensated"],
    ]);
  });
});
