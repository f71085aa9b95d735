import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ActionProposal } from "@car/ir";
import { buildDag, isCarError, parseProposal } from "@car/ir";
import { verify } from "./verify.ts";
import { GATED_DEPLOY, proposal, SPEC_ACTION, SPEC_DEPLOY_SCHEMA } from "../test/fixtures.ts";

const messages = (r: ReturnType<typeof verify>) => r.issues.map((i) => i.message);

describe("verify: the spec's examples", () => {
  it("reproduces the Verification result example's shape: levels [[a1],[a2,a3]], one conflict, valid", () => {
    const result = verify({
      actions: [
        { id: "a1", type: "tool_call", tool: "build", expected_effects: { artifact: "app.tgz" } },
        { id: "a2", type: "tool_call", tool: "deploy", state_dependencies: ["artifact"], expected_effects: { deployed: true } },
        { id: "a3", type: "tool_call", tool: "deploy_canary", state_dependencies: ["artifact"], expected_effects: { deployed: true } },
      ],
    });
    expect(result.valid).toBe(true);
    expect(result.execution_levels).toEqual([["a1"], ["a2", "a3"]]);
    expect(result.conflicts).toEqual([["a2", "a3", "deployed"]]);
    expect(result.simulated_state).toEqual({ artifact: "app.tgz", deployed: true });
    expect(result.issues).toEqual([
      {
        action_id: "a3",
        severity: "warning",
        message: "actions 'a2' and 'a3' both write 'deployed' with no dependency path between them; the final value depends on scheduling",
        tier: "decision_procedure",
      },
    ]);
  });

  it("accepts the spec's Action example when its gate and dependency hold", () => {
    const result = verify({ actions: [SPEC_ACTION] }, { state: { tests_passed: true, build_artifact: "app.tgz" }, tools: [SPEC_DEPLOY_SCHEMA] });
    const { evidence, ...rest } = result;
    expect(rest).toEqual({
      valid: true,
      issues: [],
      simulated_state: { tests_passed: true, build_artifact: "app.tgz", deployed: true },
      execution_levels: [["a1"]],
      conflicts: [],
      rollback_contract: { declared: "compensable", fully_undoable: true, not_undoable: [] },
    });
    // Every check that applies ran, and the one tool call met its schema: full coverage, nothing untested.
    expect(evidence).toMatchObject({ confidence: 1, untested_regions: [] });
  });

  it("rejects the spec's Action example from an empty state, naming key and action", () => {
    const result = verify({ actions: [SPEC_ACTION] });
    expect(result.valid).toBe(false);
    expect(messages(result)).toEqual([
      "action 'a1': precondition failed: 'tests_passed' eq true; found absent — the precondition will fail",
      "action 'a1' depends on state key 'build_artifact', which is not available when it runs (not available at this point): the initial state and earlier levels do not provide it; no action writes it",
    ]);
    expect(result.issues.every((i) => i.action_id === "a1" && i.severity === "error" && i.tier === "decision_procedure")).toBe(true);
  });
});

describe("verify: one test per finding", () => {
  it("a state_write or state_read without a string parameters.key is an error", () => {
    const result = verify({
      actions: [
        { id: "w", type: "state_write", parameters: { value: 1 } },
        { id: "r", type: "state_read", parameters: { key: 5 } },
        { id: "ok", type: "state_read", parameters: { key: "n" } },
        { id: "many", type: "state_read", parameters: { keys: ["n", "m"] } },
      ],
    });
    expect(result.valid).toBe(false);
    const errors = result.issues.filter((i) => i.severity === "error");
    expect(errors.map((i) => [i.action_id, i.tier])).toEqual([
      ["w", "decision_procedure"],
      ["r", "decision_procedure"],
    ]);
    expect(errors[0]!.message).toBe("action 'w': a state_write needs a string 'key' parameter");
    expect(errors[1]!.message).toBe("action 'r': a state_read needs a string 'key' parameter or a string array 'keys'");
  });

  it("precondition that cannot hold in the walked state is an error", () => {
    const result = verify({
      actions: [
        { id: "w", type: "state_write", parameters: { key: "n", value: 1 }, expected_effects: { n: 1 } },
        { id: "r", type: "tool_call", tool: "t", dependencies: ["w"], preconditions: [{ key: "n", operator: "gt", value: 5 }] },
      ],
    });
    expect(result.valid).toBe(false);
    expect(result.issues).toEqual([
      {
        action_id: "r",
        severity: "error",
        message: "action 'r': precondition failed: 'n' gt 5; found 1 — the precondition will fail",
        tier: "decision_procedure",
      },
    ]);
  });

  it("a precondition sees effects of earlier levels only, not of its own level", () => {
    const result = verify({
      actions: [
        { id: "a", type: "tool_call", tool: "t", expected_effects: { ready: true } },
        { id: "b", type: "tool_call", tool: "u", preconditions: [{ key: "ready", operator: "exists" }] },
        { id: "c", type: "tool_call", tool: "v", dependencies: ["a"], preconditions: [{ key: "ready", operator: "exists" }] },
      ],
    });
    expect(result.issues.map((i) => i.action_id)).toEqual(["b"]);
  });

  it("a state dependency not available at that point is an error naming the unordered writer", () => {
    const result = verify({
      actions: [
        { id: "reader", type: "tool_call", tool: "t", state_dependencies: ["cfg"] },
        { id: "writer", type: "tool_call", tool: "u", expected_effects: { cfg: 1 } },
      ],
    });
    expect(result.valid).toBe(false);
    expect(result.issues).toEqual([
      {
        action_id: "reader",
        severity: "error",
        message:
          "action 'reader' depends on state key 'cfg', which is not available when it runs (not available at this point): the initial state and earlier levels do not provide it; it is written by 'writer', not ordered before it",
        tier: "decision_procedure",
      },
    ]);
  });

  it("a state dependency the initial state provides is fine", () => {
    expect(verify({ actions: [{ id: "r", type: "tool_call", tool: "t", state_dependencies: ["cfg"] }] }, { state: { cfg: 0 } }).valid).toBe(true);
  });

  it("write conflicts are warnings with a triple; ordered writers are not conflicts", () => {
    const result = verify({
      actions: [
        { id: "a", type: "tool_call", tool: "t", expected_effects: { k: 1 } },
        { id: "b", type: "tool_call", tool: "u", expected_effects: { k: 2 } },
        { id: "c", type: "tool_call", tool: "v", dependencies: ["a", "b"], expected_effects: { k: 3 } },
      ],
    });
    expect(result.valid).toBe(true);
    expect(result.conflicts).toEqual([["a", "b", "k"]]);
    expect(result.issues).toHaveLength(1);
    expect(result.issues[0]).toMatchObject({ action_id: "b", severity: "warning", tier: "decision_procedure" });
  });

  it("explicit write_set entries take part in conflicts", () => {
    const result = verify({
      actions: [
        { id: "a", type: "tool_call", tool: "t", write_set: ["db"] },
        { id: "b", type: "tool_call", tool: "u", write_set: ["db"] },
      ],
    });
    expect(result.conflicts).toEqual([["a", "b", "db"]]);
  });

  it("three identical tool calls are a heuristic warning; two are not", () => {
    const call = (id: string, params: object) => ({ id, type: "tool_call", tool: "poll", parameters: params });
    const three = verify({ actions: [call("x", { a: 1, b: [1, 2] }), call("y", { b: [1, 2], a: 1 }), call("z", { a: 1, b: [1, 2] })] });
    expect(three.valid).toBe(true);
    expect(three.issues).toEqual([
      {
        action_id: "x",
        severity: "warning",
        message: "tool 'poll' is called 3 times with identical parameters ('x', 'y', 'z'): possible runaway loop",
        tier: "heuristic",
      },
    ]);
    const differing = verify({ actions: [call("x", { a: 1 }), call("y", { a: 1 }), call("z", { a: 2 })] });
    expect(differing.issues).toEqual([]);
  });

  it("more actions than maxActions is an error with no action id", () => {
    const result = verify(
      {
        actions: [
          { type: "tool_call", tool: "t" },
          { type: "tool_call", tool: "u" },
        ],
      },
      { maxActions: 1 },
    );
    expect(result.valid).toBe(false);
    expect(result.issues).toEqual([
      { action_id: null, severity: "error", message: "proposal has 2 actions, more than max_actions (1)", tier: "decision_procedure" },
    ]);
    expect(verify({ actions: [{ type: "tool_call", tool: "t" }] }, { maxActions: 1 }).valid).toBe(true);
  });

  it("a tool missing from the registry is an error; without a registry tools are not checked", () => {
    const p = { actions: [{ id: "a", type: "tool_call", tool: "shell" }] };
    expect(verify(p).valid).toBe(true);
    const result = verify(p, { tools: ["read_file"] });
    expect(result.issues).toEqual([
      { action_id: "a", severity: "error", message: "action 'a': calls tool 'shell', which is not registered", tier: "decision_procedure" },
    ]);
    expect(verify(p, { tools: ["shell"] }).valid).toBe(true);
  });

  it("parameters failing the tool's JSON Schema are errors naming the schema path", () => {
    const p = { actions: [{ id: "a", type: "tool_call", tool: "deploy", parameters: { env: "qa" } }] };
    const result = verify(p, { tools: [SPEC_DEPLOY_SCHEMA] });
    expect(result.valid).toBe(false);
    expect(result.issues).toHaveLength(1);
    expect(result.issues[0]!.message).toContain("#/properties/env/enum");
    expect(result.issues[0]!.message).toMatch(/^action 'a': parameters do not match the schema of tool 'deploy': \/env /);
    const missing = verify({ actions: [{ id: "b", type: "tool_call", tool: "deploy" }] }, { tools: [SPEC_DEPLOY_SCHEMA] });
    expect(missing.issues[0]!.message).toContain("#/required");
    expect(verify({ actions: [{ id: "c", type: "tool_call", tool: "deploy", parameters: { env: "prod" } }] }, { tools: [SPEC_DEPLOY_SCHEMA] }).valid).toBe(
      true,
    );
  });

  it("uses full JSON Schema, not just types and required", () => {
    const schema = { name: "resize", parameters: { type: "object", properties: { w: { type: "integer", minimum: 1 } }, additionalProperties: false } };
    const result = verify({ actions: [{ id: "a", type: "tool_call", tool: "resize", parameters: { w: 0, h: 2 } }] }, { tools: [schema] });
    const text = messages(result).join("\n");
    expect(text).toContain("#/properties/w/minimum");
    expect(text).toContain("#/additionalProperties");
  });

  it("compensable without compensation is a warning", () => {
    const result = verify({ actions: [{ id: "a", type: "tool_call", tool: "t", reversibility: "compensable" }] });
    expect(result.valid).toBe(true);
    expect(result.issues).toEqual([
      { action_id: "a", severity: "warning", message: "action 'a' is 'compensable' but declares no compensation", tier: "decision_procedure" },
    ]);
  });

  it("an action_ref compensation naming no action of the proposal is an error", () => {
    const ok = verify({
      actions: [
        { id: "a", type: "tool_call", tool: "t", reversibility: "compensable", compensation: { type: "action_ref", action_id: "undo" } },
        { id: "undo", type: "tool_call", tool: "u" },
      ],
    });
    expect(ok.issues).toEqual([]);
    const bad = verify({
      actions: [{ id: "a", type: "tool_call", tool: "t", reversibility: "compensable", compensation: { type: "action_ref", action_id: "ghost" } }],
    });
    expect(bad.issues).toEqual([
      { action_id: "a", severity: "error", message: "action 'a' names compensation action 'ghost', which is not in the proposal", tier: "decision_procedure" },
    ]);
  });
});

describe("verify: input and the forward walk", () => {
  it("a blocked action's effects still land in the walk, so there is no knock-on cascade", () => {
    const result = verify({ actions: GATED_DEPLOY });
    expect(result.issues.map((i) => i.action_id)).toEqual(["deploy"]);
    expect(result.simulated_state).toEqual({ tests_passed: false, deployed: true, release: "v2", announced: true, audited: true });
  });

  it("accepts JSON text and raw JSON data; a parse failure is a thrown invalid_proposal", () => {
    const text = JSON.stringify({ actions: [{ id: "a", type: "tool_call", tool: "t" }] });
    expect(verify(text).execution_levels).toEqual([["a"]]);
    expect(() => verify("{not json")).toThrow(expect.objectContaining({ code: "invalid_proposal" }));
    let caught: unknown;
    try {
      verify({ actions: [{ type: "tool_call" }] });
    } catch (error) {
      caught = error;
    }
    expect(isCarError(caught, "invalid_proposal")).toBe(true);
  });

  it("reports a cycle in a hand-built proposal as an error instead of throwing", () => {
    const p = proposal([
      { id: "a", type: "tool_call", tool: "t" },
      { id: "b", type: "tool_call", tool: "t" },
    ]) as ActionProposal;
    p.actions[0]!.dependencies = ["b"];
    p.actions[1]!.dependencies = ["a"];
    const result = verify(p);
    expect(result.valid).toBe(false);
    expect(result.issues[0]!.message).toContain("dependency cycle");
    expect(result.execution_levels).toEqual([]);
  });

  it("treats __proto__ as an ordinary state key", () => {
    const p = JSON.parse(
      '{"actions":[{"id":"a","type":"tool_call","tool":"t","state_dependencies":["__proto__"],"expected_effects":{"__proto__":{"polluted":true}}}]}',
    );
    const state = JSON.parse('{"__proto__": 1}');
    const result = verify(p, { state });
    expect(result.valid).toBe(true);
    expect(Object.keys(result.simulated_state)).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
  });
});

describe("verify: result built at scale without changing it", () => {
  it("execution_levels are the DAG's levels (buildDag) on random proposals", () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.nat(), { maxLength: 3 }), { minLength: 1, maxLength: 40 }), (deps) => {
        const actions = deps.map((ds, i) => ({
          id: `a${i}`,
          type: "tool_call",
          tool: "t",
          dependencies: i === 0 ? [] : [...new Set(ds.map((d) => `a${d % i}`))],
        }));
        expect(verify({ actions }).execution_levels).toEqual(buildDag(parseProposal({ actions }).actions));
      }),
      { numRuns: 100 },
    );
  });

  it("a failed precondition names the value it found when it ran, not the key's final value", () => {
    const result = verify({
      actions: [
        { id: "w1", type: "tool_call", tool: "set", expected_effects: { n: 1 } },
        { id: "r", type: "tool_call", tool: "read", dependencies: ["w1"], preconditions: [{ key: "n", operator: "gt", value: 5 }] },
        { id: "w2", type: "tool_call", tool: "reset", dependencies: ["r"], expected_effects: { n: 10 } },
      ],
    });
    expect(result.simulated_state).toEqual({ n: 10 });
    expect(messages(result)).toEqual(["action 'r': precondition failed: 'n' gt 5; found 1 — the precondition will fail"]);
  });
});

describe("verify: fields the spec does not name (DECISIONS §25)", () => {
  const typos = {
    id: "p",
    actions: [
      { id: "a1", type: "tool_call", tool: "build" },
      { id: "a2", type: "tool_call", tool: "deploy", dependecies: ["a1"], failure_behaviour: "skip" },
    ],
  };

  it("warns on each with a did-you-mean, keeps the proposal valid, and does not act on it", () => {
    const result = verify(typos);
    expect(result.valid).toBe(true);
    expect(result.issues.filter((i) => i.severity === "warning")).toEqual([
      expect.objectContaining({
        action_id: "a2",
        message: "/actions/1/dependecies: unknown field 'dependecies' — did you mean 'dependencies'? (kept as is, not acted on)",
      }),
      expect.objectContaining({ action_id: "a2", message: expect.stringContaining("did you mean 'failure_behavior'?") }),
    ]);
    // The misspelt dependency is no edge: both actions sit on the first level.
    expect(result.execution_levels).toEqual([["a1", "a2"]]);
  });

  it("strict refuses them with a typed invalid_proposal naming each pointer; a non-boolean strict is invalid_params", () => {
    let thrown: unknown;
    try {
      verify(typos, { strict: true });
    } catch (error) {
      thrown = error;
    }
    expect(isCarError(thrown) && thrown.code).toBe("invalid_proposal");
    expect(isCarError(thrown) && thrown.details.problems?.map((p) => p.pointer)).toEqual(["/actions/1/dependecies", "/actions/1/failure_behaviour"]);
    expect(() => verify(typos, { strict: "yes" as unknown as boolean })).toThrow(expect.objectContaining({ code: "invalid_params" }));
    expect(verify({ actions: [{ id: "a", type: "tool_call", tool: "t" }] }, { strict: true }).issues).toEqual([]);
  });
});
