/**
 * The engine's fast path — rules indexed by tool, per-tool plans merged in
 * registration order, string forms shared through one context — must return
 * exactly what the plain definition returns: every registered rule, in
 * order, each evaluated against freshly computed values.
 */
import { type Action, type Clock, getOwn, type JsonObject, type JsonValue } from "@car/ir";
import { stringCoerce } from "@car/ir/internal";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { CheckContext } from "./check-context.ts";
import { PolicyEngine, type PolicyRule } from "./engine.ts";
import { allowToolParamRule } from "./rules/allow-tool-param.ts";
import { callbackRule } from "./rules/callback.ts";
import { denyKeywordRule } from "./rules/deny-keyword.ts";
import { denyToolRule } from "./rules/deny-tool.ts";
import { denyToolParamConditionRule, denyToolParamRule } from "./rules/deny-tool-param.ts";
import { denyToolParamMatchingRule } from "./rules/deny-tool-param-matching.ts";
import { rateLimitToolRule } from "./rules/rate-limit-tool.ts";
import { requireStateRule } from "./rules/require-state.ts";
import type { StateLookup } from "./state.ts";
import { toolAction } from "./test-helpers.ts";

/** Recomputes everything on every call: the definition the cached context must agree with. */
class NaiveContext implements CheckContext {
  constructor(private readonly action: Action) {}
  paramStrings() {
    const params = this.action.parameters;
    return Object.keys(params).map((k) => [k, stringCoerce(params[k] as JsonValue)] as const);
  }
  joinedParamStrings() {
    return this.paramStrings()
      .map(([, text]) => text)
      .join("\u0000");
  }
  paramString(key: string) {
    const value = getOwn(this.action.parameters, key);
    return value === undefined ? undefined : stringCoerce(value);
  }
  lowerParamString(key: string) {
    return this.paramString(key)?.toLowerCase();
  }
  readonly normalisation = undefined;
  once<T>(_key: object, compute: (action: Action, context: CheckContext) => T): T {
    return compute(this.action, this);
  }
}

function referenceCheck(rules: readonly PolicyRule[], action: Action, state: StateLookup) {
  const out: { policy_name: string; action_id: string; reason: string }[] = [];
  for (const rule of rules) {
    if (rule.tool !== undefined && rule.tool !== action.tool) continue;
    let reason: string | undefined;
    try {
      reason = rule.evaluate(action, state, new NaiveContext(action));
    } catch (err) {
      reason = `policy rule '${rule.name}' failed while evaluating the action, so it denies: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`;
    }
    if (reason !== undefined) out.push({ policy_name: rule.name, action_id: action.id, reason });
  }
  return out;
}

const TOOLS = ["shell", "http", "deploy"];
const KEYS = ["command", "url", "body", "__proto__", "target"];
const tool = fc.constantFrom(...TOOLS);
const key = fc.constantFrom(...KEYS);
const text = fc
  .array(fc.constantFrom("a", "B", "s", "K", "\u212a", "\u017f", "rm", "-", " ", "=", "pass", "word", "PASS"), { maxLength: 8 })
  .map((p) => p.join(""));
const value: fc.Arbitrary<JsonValue> = fc.oneof(
  text,
  fc.integer({ min: -3, max: 3 }),
  fc.boolean(),
  fc.constant(null),
  fc.array(text, { maxLength: 2 }),
  fc.dictionary(key, text, { maxKeys: 2 }),
);
const pattern = fc.constantFrom("(?i)password\\s*=", "(?i)pas+", "sk|pass", "^rm", "(?i)k", "a+$", "(?i)s{0}a", "[", "\\d", "(?i)sword");

/** A rule described as data, so the engine and the reference each get their own instance (rate limits hold state). */
type RuleSpec =
  | { kind: "deny_tool"; tool: string }
  | { kind: "keyword"; word: string }
  | { kind: "param"; tool: string; key: string; contains?: string; equals?: JsonValue }
  | { kind: "registered_param"; tool: string; key: string; pattern: string }
  | { kind: "allow"; tool: string; key: string; allow: string[] }
  | { kind: "matching"; tool: string; key: string; pattern: string; negate: boolean }
  | { kind: "rate"; tool: string; max: number }
  | { kind: "state"; key: string; value: JsonValue }
  | { kind: "callback"; throws: boolean; name: string };

const ruleSpec: fc.Arbitrary<RuleSpec> = fc.oneof(
  fc.record({ kind: fc.constant("deny_tool" as const), tool }),
  fc.record({ kind: fc.constant("keyword" as const), word: text }),
  fc.record({ kind: fc.constant("param" as const), tool, key, contains: text, equals: value }, { requiredKeys: ["kind", "tool", "key"] }),
  fc.record({ kind: fc.constant("registered_param" as const), tool, key, pattern: text }),
  fc.record({ kind: fc.constant("allow" as const), tool, key, allow: fc.array(text, { maxLength: 2 }) }),
  fc.record({ kind: fc.constant("matching" as const), tool, key, pattern, negate: fc.boolean() }),
  fc.record({ kind: fc.constant("rate" as const), tool, max: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ kind: fc.constant("state" as const), key: fc.constantFrom("flag", "__proto__"), value: fc.constantFrom<JsonValue>(true, 1, "x") }),
  fc.record({ kind: fc.constant("callback" as const), throws: fc.boolean(), name: fc.constantFrom("cb1", "cb2") }),
);

function build(spec: RuleSpec, clock: Clock): PolicyRule {
  switch (spec.kind) {
    case "deny_tool":
      return denyToolRule(`deny_tool:${spec.tool}`, spec.tool);
    case "keyword":
      return denyKeywordRule(spec.word);
    case "param":
      return denyToolParamConditionRule(spec.tool, spec.key, {
        ...(spec.contains !== undefined ? { contains: spec.contains } : {}),
        ...(spec.equals !== undefined ? { equals: spec.equals } : {}),
      });
    case "registered_param":
      return denyToolParamRule(`registered:${spec.key}`, spec.tool, spec.key, spec.pattern);
    case "allow":
      return allowToolParamRule(spec.tool, spec.key, spec.allow);
    case "matching":
      return denyToolParamMatchingRule(spec.tool, spec.key, spec.pattern, spec.negate);
    case "rate":
      return rateLimitToolRule(spec.tool, spec.max, 60, clock);
    case "state":
      return requireStateRule(`state:${spec.key}`, spec.key, spec.value);
    case "callback":
      return callbackRule(spec.name, (a) => {
        if (spec.throws && Object.keys(a.parameters).length > 1) throw new Error("broken");
        return a.tool === "deploy" ? "no deploys" : undefined;
      });
  }
}

/** One step: a check, or removing every rule with a name drawn from the set. */
const step = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ check: fc.record({ tool: fc.oneof(tool, fc.constant("unknown")), params: fc.dictionary(key, value, { maxKeys: 4 }) }) }),
  },
  { weight: 1, arbitrary: fc.record({ unregister: fc.nat() }) },
);

describe("PolicyEngine.check agrees with evaluating every rule in order", () => {
  it("over random rule sets, removals, parameters and state", () => {
    fc.assert(
      fc.property(
        fc.array(ruleSpec, { maxLength: 14 }),
        fc.array(step, { minLength: 1, maxLength: 8 }),
        fc.constantFrom<JsonObject>({}, { flag: true }),
        (specs, steps, state) => {
          let now = 1_000_000;
          const clock: Clock = { now: () => now };
          const engine = new PolicyEngine();
          let reference: PolicyRule[] = [];
          for (const spec of specs) {
            engine.register(build(spec, clock));
            reference.push(build(spec, clock));
          }
          const lookup: StateLookup = { get: (k) => getOwn(state, k) };
          for (const s of steps) {
            if ("unregister" in s) {
              const names = reference.map((r) => r.name);
              const name = names[s.unregister % Math.max(1, names.length)] ?? "none";
              expect(engine.unregister(name)).toBe(reference.filter((r) => r.name === name).length);
              reference = reference.filter((r) => r.name !== name);
              continue;
            }
            now += 1000;
            const action = toolAction(s.check.tool, s.check.params as JsonObject, "a9");
            expect(engine.check(action, state)).toEqual(referenceCheck(reference, action, lookup));
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});
