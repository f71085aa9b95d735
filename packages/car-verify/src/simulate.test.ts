import { describe, expect, it } from "vitest";
import { simulate, simulateDetailed } from "./simulate.ts";
import { verify } from "./verify.ts";
import { GATED_DEPLOY } from "../test/fixtures.ts";

describe("simulate versus verify on car#622's gated deploy", () => {
  it("verify applies the blocked deploy's effects; simulate does not, and drops its data dependants", () => {
    const verified = verify({ actions: GATED_DEPLOY });
    expect(verified.issues.map((i) => [i.action_id, i.severity])).toEqual([["deploy", "error"]]);
    expect(verified.simulated_state).toMatchObject({ deployed: true, announced: true });

    const outcome = simulateDetailed({ actions: GATED_DEPLOY });
    expect(outcome.skipped).toEqual(["deploy", "announce"]);
    // The independent audit still lands: failure_behavior is not modelled.
    expect(outcome.state).toEqual({ tests_passed: false, audited: true });
  });

  it("lands the deploy once the gate holds", () => {
    const passing = GATED_DEPLOY.map((a) => (a.id === "test" ? { ...a, expected_effects: { tests_passed: true } } : a));
    expect(simulate({ actions: passing })).toEqual({ tests_passed: true, deployed: true, release: "v2", announced: true, audited: true });
  });
});

describe("simulate", () => {
  it("starts from the given state and leaves it untouched", () => {
    const start = { count: 1 };
    const result = simulate({ actions: [{ id: "a", type: "state_write", parameters: { key: "count", value: 2 }, expected_effects: { count: 2 } }] }, start);
    expect(result).toEqual({ count: 2 });
    expect(start).toEqual({ count: 1 });
  });

  it("drops an explicit dependant of a skipped action even when its own gates hold", () => {
    const result = simulateDetailed({
      actions: [
        { id: "gate", type: "tool_call", tool: "t", preconditions: [{ key: "go", operator: "exists" }], expected_effects: { a: 1 } },
        { id: "next", type: "tool_call", tool: "u", dependencies: ["gate"], expected_effects: { b: 1 } },
      ],
    });
    expect(result.skipped).toEqual(["gate", "next"]);
    expect(result.state).toEqual({});
  });

  it("drops a state-dependency reader whose writer was skipped even when the key already existed", () => {
    const result = simulateDetailed(
      {
        actions: [
          { id: "w", type: "tool_call", tool: "t", preconditions: [{ key: "go", operator: "exists" }], expected_effects: { cfg: 2 } },
          { id: "r", type: "tool_call", tool: "u", state_dependencies: ["cfg"], expected_effects: { used: true } },
        ],
      },
      { cfg: 1 },
    );
    expect(result.skipped).toEqual(["w", "r"]);
  });

  it("does not drop a state_write merely ordered after a skipped write to the same key", () => {
    const result = simulateDetailed({
      actions: [
        { id: "w1", type: "state_write", parameters: { key: "k", value: 1 }, expected_effects: { k: 1 }, preconditions: [{ key: "go", operator: "exists" }] },
        { id: "w2", type: "state_write", parameters: { key: "k", value: 2 }, expected_effects: { k: 2 } },
      ],
    });
    expect(result.skipped).toEqual(["w1"]);
    expect(result.state).toEqual({ k: 2 });
  });

  it("lands an action that verify blocks only through a blocked action's declared effect, as the engine runs it", () => {
    // verify's walk applies 'x' := 5 from the blocked first action, so there the second is blocked too;
    // the engine rejects 'a', so 'x' stays 0 and 'b' runs (DECISIONS §13).
    const p = {
      actions: [
        {
          id: "a",
          type: "state_write",
          parameters: { key: "z", value: 5 },
          preconditions: [{ key: "go", operator: "exists" }],
          expected_effects: { z: 5, x: 5 },
        },
        // Ordered after 'a' only because both are state_writes of 'z': no data flows from 'a'.
        { id: "c", type: "state_write", parameters: { key: "z", value: 6 }, expected_effects: { z: 6 } },
        { id: "b", type: "tool_call", tool: "u", dependencies: ["c"], preconditions: [{ key: "x", operator: "eq", value: 0 }], expected_effects: { y: 1 } },
      ],
    };
    expect(verify(p, { state: { x: 0 } }).issues.map((i) => i.action_id)).toEqual(["a", "b"]);
    const outcome = simulateDetailed(p, { x: 0 });
    expect(outcome.skipped).toEqual(["a"]);
    expect(outcome.state).toEqual({ x: 0, z: 6, y: 1 });
  });

  it("keeps a value a blocked write would have replaced, for the readers after it", () => {
    const p = {
      actions: [
        { id: "a1", type: "state_write", parameters: { key: "k", value: 2 }, preconditions: [{ key: "gate", operator: "exists" }] },
        { id: "a2", type: "tool_call", tool: "t" },
        { id: "a3", type: "state_write", dependencies: ["a2"], parameters: { key: "done", value: true }, preconditions: [{ key: "k", value: 1 }] },
      ],
    };
    expect(simulateDetailed(p, { k: 1 })).toEqual({ state: { k: 1, done: true }, skipped: ["a1"] });
  });
});
