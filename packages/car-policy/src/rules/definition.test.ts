import { describe, expect, it } from "vitest";
import { describePolicy, policyRuleFrom } from "./definition.ts";

describe("policy definitions", () => {
  it("turns each registrable kind into the rule it names, and describes it in one line", () => {
    const deny = policyRuleFrom({ name: "no-shell", rule: "deny_tool", target: "shell" });
    expect(deny.name).toBe("no-shell");
    expect(describePolicy({ name: "no-shell", rule: "deny_tool", target: "shell" })).toBe("deny_tool: target=shell");
    expect(describePolicy({ name: "p", rule: "deny_tool_param", target: "deploy", key: "env", pattern: "prod" })).toBe(
      'deny_tool_param: target=deploy, key=env, pattern="prod"',
    );
    expect(describePolicy({ name: "s", rule: "require_state", key: "ready", value_json: "true" })).toBe("require_state: key=ready, value=true");
    expect(describePolicy({ name: "c", rule: "callback" })).toBe("callback");
    expect(policyRuleFrom({ name: "s", rule: "require_state", key: "ready", value_json: "true" }).name).toBe("s");
  });

  it("refuses a definition missing a field, with bad JSON, or of an unknown or unregistrable kind", () => {
    const bad = [
      [{ name: "a", rule: "deny_tool" }, "needs 'target'"],
      [{ name: "b", rule: "deny_tool_param", target: "t", key: "k" }, "needs 'pattern'"],
      [{ name: "c", rule: "require_state", key: "k", value_json: "{" }, "value_json is not JSON"],
      [{ name: "d", rule: "require_state", key: "k" }, "needs 'value' or 'value_json'"],
      [{ name: "e", rule: "callback" }, "needs a callback function"],
      [{ name: "f", rule: "trace_rule" }, "temporal rule: register it on a TraceGate"],
      [{ name: "g", rule: "nope" }, "unknown policy rule kind 'nope'"],
    ] as const;
    for (const [def, message] of bad) {
      expect(() => policyRuleFrom(def)).toThrow(expect.objectContaining({ code: "invalid_params", message: expect.stringContaining(message) }));
    }
  });
});
