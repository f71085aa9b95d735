import { describe, expect, it } from "vitest";
import { newAction, stateRead, stateWrite, toolCall } from "./factories.ts";
import { effectiveReadSet, effectiveWriteSet, stateActionKeys } from "./state-sets.ts";

describe("state action keys", () => {
  it("names the key of a state_write, the key or keys of a state_read, and none for other types", () => {
    expect(stateActionKeys(stateWrite("a", 1))).toEqual(["a"]);
    expect(stateActionKeys(stateRead("b"))).toEqual(["b"]);
    expect(stateActionKeys(newAction("state_read", { parameters: { keys: ["x", "y"] } }))).toEqual(["x", "y"]);
    expect(stateActionKeys(toolCall("t", { key: 5 }))).toEqual([]);
  });

  it("is undefined when the executor could not run the action", () => {
    expect(stateActionKeys(newAction("state_write", { parameters: { value: 1 } }))).toBeUndefined();
    expect(stateActionKeys(newAction("state_write", { parameters: { keys: ["x"] } }))).toBeUndefined();
    expect(stateActionKeys(newAction("state_read", { parameters: { keys: ["x", 2] } }))).toBeUndefined();
  });

  it("effective sets are unions: a partial explicit set never narrows what the action touches", () => {
    const read = newAction("state_read", { parameters: { keys: ["x", "y"] }, read_set: ["z"], state_dependencies: ["d"], assumptions: [{ key: "s" }] });
    expect(effectiveReadSet(read).sort()).toEqual(["d", "s", "x", "y", "z"]);
    const write = newAction("state_write", { parameters: { key: "k", value: 1 }, write_set: ["other"], expected_effects: { side: true } });
    expect(effectiveWriteSet(write).sort()).toEqual(["k", "other", "side"]);
  });
});
