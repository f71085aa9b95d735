import { cloneJson, emptyMap, type JsonObject, type JsonValue, setOwn } from "@car/ir";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PolicyEngine } from "./engine.ts";
import { parsePolicyFile } from "./files/parse-policy-file.ts";
import { callbackRule } from "./rules/callback.ts";
import { denyToolParamRule } from "./rules/deny-tool-param.ts";
import { requireStateRule } from "./rules/require-state.ts";
import { toolAction } from "./test-helpers.ts";

/** One engine holding every rule kind, all aimed at the tool the arbitrary actions call. */
function fullEngine(): PolicyEngine {
  const engine = new PolicyEngine();
  parsePolicyFile(
    "all.toml",
    `deny_keyword = ["rm -rf /", "__proto__"]
[[deny_tool_param]]
tool = "t"
param = "__proto__"
equals = { a = 1 }
[[deny_tool_param]]
tool = "t"
param = "constructor"
contains = "x"
[[allow_tool_param]]
tool = "t"
param = "toString"
allow = ["ok"]
[[deny_tool_param_matching]]
tool = "t"
param = "__proto__"
matches = "(a+)+$"
[[deny_tool_param_matching]]
tool = "t"
param = "hasOwnProperty"
matches = "^ok"
negate = true
[[rate_limit_tool]]
tool = "t"
max_calls = 1000000
interval_secs = 60
`,
  ).apply(engine);
  engine.register(denyToolParamRule("registered", "t", "valueOf", "x"));
  engine.register(requireStateRule("state", "__proto__", { x: 1 }));
  engine.register(callbackRule("cb", (a) => (Object.keys(a.parameters).length > 3 ? "many" : undefined)));
  return engine;
}

const key = fc.oneof(fc.constantFrom("__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "prototype"), fc.string());
const json: fc.Arbitrary<JsonValue> = fc.letrec<{ value: JsonValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.double(),
    fc.string(),
    fc.array(tie("value")),
    fc.dictionary(key, tie("value"), { noNullPrototype: false }),
  ),
})).value;

describe("PolicyEngine.check never throws", () => {
  it("for any JSON parameters, including prototype-named keys", () => {
    const engine = fullEngine();
    fc.assert(
      fc.property(fc.dictionary(key, json), fc.dictionary(key, json), (params, state) => {
        // Through cloneJson too, so `__proto__` arrives as an own key on a prototype-free map.
        for (const p of [params, cloneJson(params as JsonObject)]) {
          const violations = engine.check(toolAction("t", p as JsonObject), state as JsonObject);
          expect(Array.isArray(violations)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("for a 1 MB string in every parameter a rule reads", () => {
    const engine = fullEngine();
    const big = "a".repeat(1 << 20);
    const params = emptyMap();
    for (const k of ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"]) setOwn(params, k, big);
    const violations = engine.check(toolAction("t", params));
    expect(violations.map((v) => v.policy_name)).toContain("deny_tool_param_matching:t.__proto__");
    expect(violations.map((v) => v.policy_name)).toContain("allow_tool_param:t.toString");
  });
});
