/**
 * `deny_tool_param_matching`: a regular expression over one parameter's
 * string form, unanchored. RE2 semantics (re2js) because the input is
 * attacker-controlled: matching is linear in its length, so no parameter can
 * turn a rule into a denial of service. The pattern is compiled once, here; a
 * pattern that does not compile denies every call to its tool instead of
 * vanishing. A pattern that starts with a literal first asks a substring
 * prefilter, which only ever skips inputs RE2 would reject.
 */
import type { Action } from "@car/ir";
import { RE2JS } from "re2js";
import type { PolicyRule } from "../engine.ts";
import { markScanRule } from "../rule-shapes.ts";
import { literalPrefilter } from "./literal-prefilter.ts";

/** Compiles a pattern with RE2 semantics: the regex, or why it does not compile. */
export function compilePattern(matches: string): { regex: RE2JS } | { error: string } {
  try {
    return { regex: RE2JS.compile(matches) };
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
}

export function denyToolParamMatchingRule(tool: string, param: string, matches: string, negate: boolean): PolicyRule {
  const name = `deny_tool_param_matching:${tool}.${param}`;
  const compiled = compilePattern(matches);
  if ("error" in compiled) {
    const reason = `the pattern for parameter '${param}' of tool '${tool}' does not compile, so every call is denied: ${compiled.error}`;
    return { name, tool, evaluate: (action: Action) => (action.tool === tool ? reason : undefined) };
  }
  const regex = compiled.regex;
  const prefilter = literalPrefilter(matches);
  const absent = negate ? `parameter '${param}' of tool '${tool}' is absent, and a required pattern must match it` : undefined;
  const denial = negate
    ? `parameter '${param}' of tool '${tool}' does not match the required pattern`
    : `parameter '${param}' of tool '${tool}' matches a denied pattern`;
  const rule: PolicyRule = {
    name,
    tool,
    evaluate(action, _state, context) {
      if (action.tool !== tool) return undefined;
      const text = context.paramString(param);
      if (text === undefined) return absent;
      const found =
        (prefilter === undefined || prefilter.mayMatch(prefilter.foldCase ? (context.lowerParamString(param) as string) : text)) && regex.test(text);
      return found !== negate ? denial : undefined;
    },
  };
  // A required pattern denies what it does not match, so only a prohibition can be skipped for lacking its literals.
  if (negate || prefilter === undefined) return rule;
  return markScanRule({ kind: "screened", param, needs: prefilter.literals, foldCase: prefilter.foldCase }, rule);
}
