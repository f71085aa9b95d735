import { describe, expect, it } from "vitest";
import {
  assertion,
  effectiveReadSet,
  effectiveWriteSet,
  newAction,
  parseAction,
  sequentialIds,
  serializeAction,
  stateRead,
  stateWrite,
  toolCall,
} from "./index.ts";

describe("action factories", () => {
  it("newAction fills every default and a generated id", () => {
    const a = newAction("assertion", {}, { ids: sequentialIds("n") });
    expect(a.id).toBe("n1");
    // Identical to what the parser produces for the same minimal wire action.
    expect(serializeAction(a)).toEqual(serializeAction(parseAction({ id: "n1", type: "assertion" })));
  });

  it("generates UUID ids by default, unique per call", () => {
    const a = toolCall("t");
    const b = toolCall("t");
    expect(a.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.id).not.toBe(b.id);
  });

  it("toolCall sets tool and parameters; overrides win over defaults but not over the factory's own fields", () => {
    const a = toolCall("deploy", { env: "staging" }, { id: "d", idempotent: true, failure_behavior: "retry", timeout_ms: 5 });
    expect(a).toMatchObject({
      id: "d",
      type: "tool_call",
      tool: "deploy",
      parameters: { env: "staging" },
      idempotent: true,
      failure_behavior: "retry",
      timeout_ms: 5,
      max_retries: 3,
    });
  });

  it("copies caller data instead of sharing it", () => {
    const params = { list: [1] };
    const a = toolCall("t", params);
    params.list.push(2);
    expect(a.parameters).toEqual({ list: [1] });
  });

  it("stateWrite sets both the {key, value} parameters and expected_effects", () => {
    const a = stateWrite("deployed", { at: 1 }, { id: "w" });
    expect(a.type).toBe("state_write");
    expect(a.parameters).toEqual({ key: "deployed", value: { at: 1 } });
    expect(a.expected_effects).toEqual({ deployed: { at: 1 } });
    expect(effectiveWriteSet(a)).toEqual(["deployed"]);
  });

  it("stateWrite keeps a __proto__ key as data", () => {
    const a = stateWrite("__proto__", 1);
    expect(Object.keys(a.expected_effects)).toEqual(["__proto__"]);
    expect(JSON.stringify(serializeAction(a).expected_effects)).toBe('{"__proto__":1}');
  });

  it("stateRead reads its key", () => {
    const a = stateRead("k");
    expect(a.parameters).toEqual({ key: "k" });
    expect(effectiveReadSet(a)).toEqual(["k"]);
  });

  it("assertion completes its preconditions", () => {
    const a = assertion([{ key: "ready" }, { key: "n", operator: "gt", value: 1 }]);
    expect(a.type).toBe("assertion");
    expect(a.preconditions).toEqual([
      { key: "ready", operator: "eq", value: null, description: "" },
      { key: "n", operator: "gt", value: 1, description: "" },
    ]);
  });
});
