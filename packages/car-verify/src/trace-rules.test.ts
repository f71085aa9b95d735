import type { TraceRule } from "@car/ir";
import { describe, expect, it } from "vitest";
import { proposal } from "../test/fixtures.ts";
import { TRACE_PAIR_BUDGET } from "./trace-rules.ts";
import { verify } from "./verify.ts";

const tool = (id: string, name: string, extra: object = {}) => ({ id, type: "tool_call", tool: name, ...extra });
const findings = (actions: object[], rules: TraceRule[]) =>
  verify(proposal(actions), { traceRules: rules }).issues.filter((i) => i.message.startsWith("trace_rule:") || i.message.startsWith("tests_first"));

const TESTS_FIRST: TraceRule = { kind: "only_after", tool: "deploy", after: "run_tests", scope: "proposal" };

describe("verify: trace rules against the orders a DAG permits", () => {
  it("only_after: deploy not ordered after run_tests is a warning naming the rule; ordered, nothing", () => {
    const unordered = findings([tool("t", "run_tests"), tool("d", "deploy")], [TESTS_FIRST]);
    expect(unordered).toEqual([
      {
        action_id: "d",
        severity: "warning",
        message: "trace_rule:only_after(deploy,run_tests): the DAG permits 'd' to run before any 'run_tests' succeeded: it is not ordered after 't'",
        tier: "decision_procedure",
      },
    ]);
    expect(
      findings([tool("t", "run_tests"), tool("b", "build", { dependencies: ["t"] }), tool("d", "deploy", { dependencies: ["b"] })], [TESTS_FIRST]),
    ).toEqual([]);
  });

  it("only_after: ordering through state dependencies counts as ordering", () => {
    const actions = [tool("t", "run_tests", { expected_effects: { green: true } }), tool("d", "deploy", { state_dependencies: ["green"] })];
    expect(findings(actions, [TESTS_FIRST])).toEqual([]);
  });

  it("only_after: no run_tests at all is an error in proposal scope (every order breaks it), info in session scope", () => {
    const strict = verify(proposal([tool("d", "deploy")]), { traceRules: [TESTS_FIRST] });
    expect(strict.valid).toBe(false);
    expect(strict.issues[0]?.message).toContain("every order breaks the rule");
    const session = verify(proposal([tool("d", "deploy")]), { traceRules: [{ ...TESTS_FIRST, scope: "session" }] });
    expect(session.valid).toBe(true);
    expect(session.issues.map((i) => i.severity)).toEqual(["info"]);
  });

  it("never_after: Y before X is an error, unordered a warning, X before Y fine", () => {
    const rule: TraceRule = { kind: "never_after", tool: "http_request", after: "read_secret", scope: "proposal" };
    expect(findings([tool("s", "read_secret"), tool("h", "http_request", { dependencies: ["s"] })], [rule]).map((i) => i.severity)).toEqual(["error"]);
    expect(findings([tool("s", "read_secret"), tool("h", "http_request")], [rule]).map((i) => i.severity)).toEqual(["warning"]);
    expect(findings([tool("h", "http_request"), tool("s", "read_secret", { dependencies: ["h"] })], [rule])).toEqual([]);
  });

  it("never_after(X, X): a second X is always refused", () => {
    const rule: TraceRule = { kind: "never_after", tool: "pay", after: "pay", scope: "proposal" };
    expect(findings([tool("a", "pay")], [rule])).toEqual([]);
    expect(findings([tool("a", "pay"), tool("b", "pay", { dependencies: ["a"] })], [rule]).map((i) => i.severity)).toEqual(["error"]);
  });

  it("max_calls: more X actions than N is an error; compensations that could exceed it, a warning", () => {
    const rule: TraceRule = { kind: "max_calls", tool: "email", max_calls: 1, scope: "proposal" };
    expect(findings([tool("a", "email"), tool("b", "email", { parameters: { to: "x" } })], [rule]).map((i) => i.severity)).toEqual(["error"]);
    const compensated = [tool("a", "email"), tool("c", "charge", { reversibility: "compensable", compensation: { type: "tool", tool: "email" } })];
    expect(findings(compensated, [rule]).map((i) => i.severity)).toEqual(["warning"]);
  });

  it("requires_approval: an info per gated action; rules for tools the proposal never calls say nothing", () => {
    expect(findings([tool("d", "deploy")], [{ kind: "requires_approval", tool: "deploy", scope: "proposal" }]).map((i) => i.severity)).toEqual(["info"]);
    expect(findings([tool("x", "other")], [TESTS_FIRST, { kind: "requires_approval", tool: "deploy", scope: "proposal" }])).toEqual([]);
  });

  it("compensation actions never run forward, so they neither satisfy nor break a rule", () => {
    const actions = [
      tool("t", "run_tests", { reversibility: "compensable", compensation: { type: "action_ref", action_id: "undo" } }),
      tool("undo", "deploy"),
      tool("d", "deploy", { dependencies: ["t"] }),
    ];
    expect(findings(actions, [TESTS_FIRST])).toEqual([]);
    expect(findings(actions, [{ kind: "max_calls", tool: "deploy", max_calls: 1, scope: "proposal" }]).map((i) => i.severity)).toEqual(["warning"]);
  });

  it("gives at most one issue per rule however many actions break it", () => {
    const actions = [tool("t", "run_tests"), ...Array.from({ length: 5 }, (_, i) => tool(`d${i}`, "deploy"))];
    const rules: TraceRule[] = [TESTS_FIRST, { kind: "requires_approval", tool: "deploy", scope: "proposal" }];
    const found = findings(actions, rules);
    expect(found.map((i) => [i.action_id, i.severity])).toEqual([
      ["d0", "warning"],
      ["d0", "info"],
    ]);
    expect(found[0]?.message).toContain("(and 4 more 'deploy' actions)");
  });

  it("never_after: an unordered pair is found past the first X and Y", () => {
    const rule: TraceRule = { kind: "never_after", tool: "http_request", after: "read_secret", scope: "proposal" };
    // Every read_secret follows h0; only h1 is unordered with s1.
    const actions = [
      tool("h0", "http_request"),
      tool("h1", "http_request", { dependencies: ["h0"] }),
      tool("s0", "read_secret", { dependencies: ["h1"] }),
      tool("s1", "read_secret", { dependencies: ["h0"] }),
    ];
    const found = findings(actions, [rule]);
    expect(found.map((i) => [i.action_id, i.severity])).toEqual([["h1", "warning"]]);
    expect(found[0]?.message).toContain("'s1' to run before 'h1'");
  });
  it("never_after: past TRACE_PAIR_BUDGET pairs it stops asking and says the rest were not checked", () => {
    const rule: TraceRule = { kind: "never_after", tool: "http_request", after: "read_secret", scope: "proposal" };
    // 300 × 300 pairs, every one ordered through a join: more pairs than the budget, none a witness.
    const hs = Array.from({ length: 300 }, (_, i) => tool(`h${i}`, "http_request"));
    const join = tool("join", "barrier", { dependencies: hs.map((h) => h.id) });
    const ss = Array.from({ length: 300 }, (_, i) => tool(`s${i}`, "read_secret", { dependencies: ["join"] }));
    expect(300 * 300).toBeGreaterThan(TRACE_PAIR_BUDGET);
    const found = findings([...hs, join, ...ss], [rule]);
    expect(found.map((i) => i.severity)).toEqual(["warning"]);
    expect(found[0]?.message).toContain("the rest were not checked");
    // Under the budget the same shape is proved fine.
    const small = findings([...hs.slice(0, 10), { ...join, dependencies: hs.slice(0, 10).map((h) => h.id) }, ...ss.slice(0, 10)], [rule]);
    expect(small).toEqual([]);
  });
});

describe("verify: trace rules stay linear in the proposal", () => {
  const RULES: TraceRule[] = [
    TESTS_FIRST,
    { kind: "never_after", tool: "http_request", after: "read_secret", scope: "proposal" },
    { kind: "never_after", tool: "deploy", after: "http_request", scope: "session" },
    { kind: "requires_approval", tool: "deploy", scope: "proposal" },
    { kind: "max_calls", tool: "read_secret", max_calls: 100_000, scope: "proposal" },
  ];
  for (const size of [10_000, 50_000]) {
    it(`${size} unordered actions: one issue per rule, and verify completes`, () => {
      const tools = ["deploy", "run_tests", "http_request", "read_secret"];
      const actions = Array.from({ length: size }, (_, i) => tool(`a${i}`, tools[i % tools.length]!));
      const started = performance.now();
      const found = findings(actions, RULES);
      const ms = performance.now() - started;
      // Four rules are broken (only_after, both never_after, requires_approval); max_calls is not.
      expect(found.map((i) => i.message.split(": ")[0]).sort()).toEqual([
        "trace_rule:never_after(deploy,http_request)@session",
        "trace_rule:never_after(http_request,read_secret)",
        "trace_rule:only_after(deploy,run_tests)",
        "trace_rule:requires_approval(deploy)",
      ]);
      console.log(`verify with ${RULES.length} trace rules over ${size} unordered actions: ${ms.toFixed(0)} ms`);
    });
  }
});
