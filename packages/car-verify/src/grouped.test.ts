import { describe, expect, it } from "vitest";
import { GROUP_SAMPLE } from "./grouped.ts";
import { verify } from "./verify.ts";

const writers = (n: number, key: string) =>
  Array.from({ length: n }, (_, i) => ({ id: `w${i}`, type: "tool_call", tool: "t", parameters: { i }, expected_effects: { [key]: i } }));

describe("verify groups many findings of one kind on one key", () => {
  it("reports up to GROUP_SAMPLE conflicts on a key one by one", () => {
    const result = verify({ actions: writers(3, "k") }); // 3 pairs
    expect(GROUP_SAMPLE).toBeGreaterThanOrEqual(3);
    expect(result.issues.map((i) => i.message)).toEqual([
      "actions 'w0' and 'w1' both write 'k' with no dependency path between them; the final value depends on scheduling",
      "actions 'w0' and 'w2' both write 'k' with no dependency path between them; the final value depends on scheduling",
      "actions 'w1' and 'w2' both write 'k' with no dependency path between them; the final value depends on scheduling",
    ]);
  });

  it("reports many conflicts on one key as one warning with the count and a sample, every pair in conflicts", () => {
    const result = verify({ actions: [...writers(20, "k"), { id: "x", type: "tool_call", tool: "t", expected_effects: { other: 1 } }] });
    expect(result.conflicts).toHaveLength(190);
    const warnings = result.issues.filter((i) => i.severity === "warning");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.action_id).toBe("w1");
    expect(warnings[0]!.message).toBe(
      "190 pairs of actions write 'k' with no dependency path between them ('w0' and 'w1', 'w0' and 'w2', 'w1' and 'w2', 'w0' and 'w3', 'w1' and 'w3' and 185 more); the final value depends on scheduling; every pair is listed in conflicts",
    );
  });

  it("reports many actions blocked on one key as one error per kind, each naming the count", () => {
    const actions = Array.from({ length: 8 }, (_, i) => ({
      id: `b${i}`,
      type: "tool_call",
      tool: "t",
      parameters: { i },
      preconditions: [{ key: "ready", operator: "exists" }],
      state_dependencies: ["cfg"],
    }));
    const result = verify({ actions });
    expect(result.valid).toBe(false);
    expect(result.issues.map((i) => [i.action_id, i.message])).toEqual([
      [
        "b0",
        "8 actions have a precondition on 'ready' that cannot hold ('b0', 'b1', 'b2', 'b3', 'b4' and 3 more); the first: action 'b0': precondition failed: 'ready' exists; found absent: key 'ready' does not exist — the precondition will fail",
      ],
      [
        "b0",
        "8 actions depend on state key 'cfg', which is not available when they run (not available at this point) ('b0', 'b1', 'b2', 'b3', 'b4' and 3 more): the initial state and earlier levels do not provide it; no action writes it",
      ],
    ]);
  });

  it("keeps one action's blocking findings individual when few actions share the key", () => {
    const result = verify({
      actions: [
        { id: "r", type: "tool_call", tool: "t", state_dependencies: ["cfg"] },
        { id: "w", type: "tool_call", tool: "t", expected_effects: { cfg: 1 } },
      ],
    });
    expect(result.issues.map((i) => i.message)).toEqual([
      "action 'r' depends on state key 'cfg', which is not available when it runs (not available at this point): the initial state and earlier levels do not provide it; it is written by 'w', not ordered before it",
    ]);
  });
});
