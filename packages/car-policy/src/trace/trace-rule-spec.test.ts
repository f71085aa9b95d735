import { isCarError } from "@car/ir";
import { describe, expect, it } from "vitest";
import { PolicyEngine } from "../engine.ts";
import { parsePolicyFile } from "../files/parse-policy-file.ts";
import { PolicyLoadError } from "../files/policy-load-error.ts";
import { TraceGate } from "./trace-gate.ts";

const FILE = `
[[trace_rule]]
kind  = "only_after"
tool  = "deploy"
after = "run_tests"

[[trace_rule]]
kind = "requires_approval"
tool = "charge_card"
scope = "session"
`;

describe("trace rules from a policy file", () => {
  it("apply onto a TraceGate, which then enforces them", () => {
    const rules = parsePolicyFile("ops.toml", FILE);
    const gate = new TraceGate();
    rules.apply(new PolicyEngine(), { traceGate: gate });
    expect(gate.names()).toEqual(["trace_rule:only_after(deploy,run_tests)", "trace_rule:requires_approval(charge_card)@session"]);
    expect(gate.admit({ tool: "deploy", action_id: "d", run_id: "p" })).toHaveLength(1);
  });

  it("refuse to apply without a TraceGate (they would silently not apply) unless told to ignore them", () => {
    const rules = parsePolicyFile("ops.toml", FILE);
    let thrown: unknown;
    try {
      rules.apply(new PolicyEngine());
    } catch (err) {
      thrown = err;
    }
    expect(isCarError(thrown, "invalid_params")).toBe(true);
    const engine = new PolicyEngine();
    rules.apply(engine, { traceRules: "ignore" });
    expect(engine.size).toBe(0);
  });

  it("a malformed rule names the file and the entry", () => {
    let thrown: unknown;
    try {
      parsePolicyFile("ops.toml", '[[trace_rule]]\nkind = "only_after"\ntool = "deploy"\nbefore = "x"\n');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(PolicyLoadError);
    expect((thrown as PolicyLoadError).message).toBe("policy file ops.toml: unknown key 'before' in trace_rule[0] (kind only_after)");
  });
});
