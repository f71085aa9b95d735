/** DECISIONS §15: verify and simulate model a state_write's own {key, value} as the engine applies it. */
import { describe, expect, it } from "vitest";
import { simulate } from "./simulate.ts";
import { verify } from "./verify.ts";

const natural = {
  actions: [
    { id: "approve", type: "state_write", parameters: { key: "approved", value: true } },
    {
      id: "deploy",
      type: "tool_call",
      tool: "deploy",
      dependencies: ["approve"],
      state_dependencies: ["approved"],
      preconditions: [{ key: "approved", operator: "eq", value: true }],
    },
  ],
};

describe("a state_write declares its own effect", () => {
  it("verify accepts the natural form without a duplicate expected_effects", () => {
    const report = verify(natural);
    expect(report.issues.filter((i) => i.severity === "error")).toEqual([]);
    expect(report.valid).toBe(true);
  });

  it("simulate lands the written value, and it wins over an expected_effects entry for the same key", () => {
    expect(simulate(natural)).toEqual({ approved: true });
    const overridden = simulate({ actions: [{ id: "w", type: "state_write", parameters: { key: "k", value: 2 }, expected_effects: { k: 1, other: "x" } }] });
    expect(overridden).toEqual({ k: 2, other: "x" });
  });

  it("a key that is an output reference is an error: verify could not model the write it names", () => {
    const report = verify({
      actions: [
        { id: "t1", type: "tool_call", tool: "t" },
        { id: "w", type: "state_write", parameters: { key: "$t1.output.name", value: 1 }, dependencies: ["t1"] },
        { id: "v", type: "state_write", parameters: { key: "v", value: "$t1.output" }, dependencies: ["t1"] },
      ],
    });
    expect(report.valid).toBe(false);
    const errors = report.issues.filter((i) => i.severity === "error").map((i) => i.message);
    expect(errors).toEqual(["action 'w': a state_write names the state key '$t1.output.name', an output reference; state keys must be literal strings"]);
  });
});
