/**
 * `deny_tool_param_matching`: a regular expression over one parameter's
 * string form, unanchored. RE2 semantics (re2js) because the input is
 * attacker-controlled: matching is linear in its length, so no parameter can
 * turn a rule into a denial of service. The pattern is compiled once, here; a
 * pattern that does not compile denies every call to its tool instead of
 * vanishing.
 */
import { type Action, getOwn, stringCoerce } from "@car/ir";
import { RE2JS } from "re2js";
import type { PolicyRule } from "../engine.ts";

export function denyToolParamMatchingRule(tool: string, param: string, matches: string, negate: boolean): PolicyRule {
  const name = `deny_tool_param_matching:${tool}.${param}`;
  let regex: RE2JS;
  try {
    regex = RE2JS.compile(matches);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    const reason = `the pattern for parameter '${param}' of tool '${tool}' does not compile, so every call is denied: ${why}`;
    return { name, tool, evaluate: (action: Action) => (action.tool === tool ? reason : undefined) };
  }
  return {
    name,
    tool,
    evaluate(action: Action) {
      if (action.tool !== tool) return undefined;
      const value = getOwn(action.parameters, param);
      if (value === undefined) {
        return negate ? `parameter '${param}' of tool '${tool}' is absent, and a required pattern must match it` : undefined;
      }
      const found = regex.test(stringCoerce(value));
      if (negate) return found ? undefined : `parameter '${param}' of tool '${tool}' does not match the required pattern`;
      return found ? `parameter '${param}' of tool '${tool}' matches a denied pattern` : undefined;
    },
  };
}
