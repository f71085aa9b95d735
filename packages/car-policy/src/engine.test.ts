import { describe, expect, it } from "vitest";
import { PolicyEngine } from "./engine.ts";
import { callbackRule } from "./rules/callback.ts";
import { denyToolRule } from "./rules/deny-tool.ts";
import { denyToolParamRule } from "./rules/deny-tool-param.ts";
import { requireStateRule } from "./rules/require-state.ts";
import { toolAction } from "./test-helpers.ts";

describe("PolicyEngine", () => {
  it("deny_tool refuses its target and nothing else", () => {
    const engine = new PolicyEngine();
    engine.register(denyToolRule("no_shell", "shell"));
    expect(engine.check(toolAction("shell", { command: "ls" }, "a3"))).toEqual([
      { policy_name: "no_shell", action_id: "a3", reason: "tool 'shell' is denied by policy" },
    ]);
    expect(engine.check(toolAction("read_file"))).toEqual([]);
  });

  it("deny_tool_param matches a substring of the string-coerced value", () => {
    const engine = new PolicyEngine();
    engine.register(denyToolParamRule("no_rm_rf", "shell", "command", "rm -rf"));
    engine.register(denyToolParamRule("no_port", "http", "opts", '"port":22'));
    const [v] = engine.check(toolAction("shell", { command: "sudo rm -rf /tmp/x" }, "a3"));
    expect(v).toEqual({ policy_name: "no_rm_rf", action_id: "a3", reason: "param 'command' matches denied pattern 'rm -rf'" });
    expect(engine.check(toolAction("shell", { command: "ls" }))).toEqual([]);
    expect(engine.check(toolAction("shell", {}))).toEqual([]);
    expect(engine.check(toolAction("other", { command: "rm -rf /" }))).toEqual([]);
    expect(engine.check(toolAction("http", { opts: { port: 22 } })).map((x) => x.policy_name)).toEqual(["no_port"]);
  });

  it("require_state denies until the state key deep-equals the value", () => {
    const engine = new PolicyEngine();
    engine.register(requireStateRule("tests_must_pass", "tests_passed", true));
    engine.register(requireStateRule("config", "cfg", { a: [1, 2] }));
    const action = toolAction("deploy");
    expect(engine.check(action, {}).map((v) => v.policy_name)).toEqual(["tests_must_pass", "config"]);
    expect(engine.check(action, { tests_passed: "true", cfg: { a: [1, 2] } }).map((v) => v.policy_name)).toEqual(["tests_must_pass"]);
    expect(engine.check(action, { tests_passed: true, cfg: { a: [1, 2] } })).toEqual([]);
    const store = new Map<string, unknown>([
      ["tests_passed", true],
      ["cfg", { a: [1, 2] }],
    ]);
    expect(engine.check(action, { get: (k: string) => store.get(k) as never })).toEqual([]);
  });

  it("a state object with a 'get' key is data, not a store", () => {
    const engine = new PolicyEngine();
    engine.register(requireStateRule("r", "get", 1));
    expect(engine.check(toolAction("t"), { get: 1 })).toEqual([]);
  });

  it("evaluates every rule and returns every violation", () => {
    const engine = new PolicyEngine();
    engine.register(denyToolRule("a", "shell"));
    engine.register(denyToolParamRule("b", "shell", "command", "rm"));
    engine.register(callbackRule("c", (action) => (action.tool === "shell" ? "no shells today" : undefined)));
    expect(engine.check(toolAction("shell", { command: "rm x" })).map((v) => v.policy_name)).toEqual(["a", "b", "c"]);
  });

  it("a callback that throws is a violation naming the rule, not a crash", () => {
    const engine = new PolicyEngine();
    engine.register(
      callbackRule("audit_payment", () => {
        throw new Error("boom");
      }),
    );
    engine.register(callbackRule("empty_passes", () => ""));
    const violations = engine.check(toolAction("payment"));
    expect(violations).toHaveLength(1);
    expect(violations[0]?.policy_name).toBe("audit_payment");
    expect(violations[0]?.reason).toContain("audit_payment");
    expect(violations[0]?.reason).toContain("boom");
  });

  it("unregister removes every rule by name and names() lists distinct names", () => {
    const engine = new PolicyEngine();
    engine.register(denyToolRule("x", "a"));
    engine.register(denyToolRule("y", "b"));
    engine.register(denyToolRule("x", "c"));
    expect(engine.names()).toEqual(["x", "y"]);
    expect(engine.unregister("x")).toBe(2);
    expect(engine.unregister("missing")).toBe(0);
    expect(engine.names()).toEqual(["y"]);
    expect(engine.check(toolAction("a"))).toEqual([]);
    expect(engine.check(toolAction("b"))).toHaveLength(1);
  });
});

describe("PolicyEngine indexing", () => {
  it("keeps registration order across tool-specific and general rules, and skips other tools' rules", () => {
    const engine = new PolicyEngine();
    let otherToolEvaluated = false;
    engine.register(callbackRule("general-1", () => "g1"));
    engine.register(denyToolRule("specific-1", "shell"));
    engine.register({
      name: "other-tool",
      tool: "http",
      evaluate: () => {
        otherToolEvaluated = true;
        return "never for shell";
      },
    });
    engine.register(callbackRule("general-2", () => "g2"));
    engine.register(denyToolParamRule("specific-2", "shell", "command", "x"));
    expect(engine.check(toolAction("shell", { command: "x" })).map((v) => v.policy_name)).toEqual(["general-1", "specific-1", "general-2", "specific-2"]);
    expect(otherToolEvaluated).toBe(false);
    engine.unregister("general-1");
    expect(engine.check(toolAction("http")).map((v) => v.policy_name)).toEqual(["other-tool", "general-2"]);
  });
});
