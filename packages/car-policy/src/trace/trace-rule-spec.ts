/**
 * One trace rule from its authored form — a `[[trace_rule]]` table of a
 * policy file or the `trace` object of a registration — checked strictly:
 * an unknown kind or key, a missing operand or a wrong type is refused with a
 * message naming the entry, never read as a weaker rule.
 */
import { TRACE_RULE_KINDS, type TraceRule, type TraceRuleKind, type TraceScope } from "@car/ir";

type Fail = (problem: string) => never;

const KEYS: Record<TraceRuleKind, readonly string[]> = {
  only_after: ["kind", "tool", "after", "scope", "name"],
  never_after: ["kind", "tool", "after", "scope", "name"],
  max_calls: ["kind", "tool", "max_calls", "scope", "name"],
  requires_approval: ["kind", "tool", "scope", "name"],
};

/** `table` as a `TraceRule`; `at` names the entry in messages (`trace_rule[2]`). */
export function traceRuleFrom(table: unknown, at: string, fail: Fail): TraceRule {
  if (typeof table !== "object" || table === null || Array.isArray(table) || table instanceof Date) {
    return fail(`${at} must be a table`);
  }
  const t = table as Record<string, unknown>;
  const kind = t["kind"];
  if (typeof kind !== "string" || !(TRACE_RULE_KINDS as readonly string[]).includes(kind)) {
    return fail(`${at}.kind must be one of ${TRACE_RULE_KINDS.join(", ")}`);
  }
  const k = kind as TraceRuleKind;
  for (const key of Object.keys(t)) if (!KEYS[k].includes(key)) fail(`unknown key '${key}' in ${at} (kind ${k})`);
  const text = (key: string): string => {
    const v = t[key];
    if (v === undefined) return fail(`${at}.${key} is required for kind ${k}`);
    if (typeof v !== "string" || v === "") return fail(`${at}.${key} must be a non-empty string`);
    return v;
  };
  const scopeValue = t["scope"] ?? "proposal";
  if (scopeValue !== "proposal" && scopeValue !== "session") fail(`${at}.scope must be "proposal" or "session"`);
  const scope = scopeValue as TraceScope;
  const named = t["name"] === undefined ? {} : { name: text("name") };
  const tool = text("tool");
  switch (k) {
    case "only_after":
    case "never_after":
      return { kind: k, tool, after: text("after"), scope, ...named };
    case "max_calls": {
      const max = t["max_calls"];
      if (typeof max !== "number" || !Number.isSafeInteger(max) || max < 0) return fail(`${at}.max_calls must be a non-negative integer`);
      return { kind: k, tool, max_calls: max, scope, ...named };
    }
    case "requires_approval":
      return { kind: k, tool, scope, ...named };
  }
}
