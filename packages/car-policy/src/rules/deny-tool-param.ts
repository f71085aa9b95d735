/**
 * `deny_tool_param`: refuse a call to one tool by one parameter's value. The
 * registered form matches a substring; the file form adds exact JSON equality
 * and a bare presence check. An absent parameter never violates.
 */
import { type Action, getOwn, jsonEquals, type JsonValue } from "@car/ir";
import type { PolicyRule } from "../engine.ts";
import { markScanRule } from "../rule-shapes.ts";
import { includesWith, rareCharacter } from "./rare-character.ts";

/** What a file rule compares; with neither field set the rule denies presence alone. */
export interface ParamCondition {
  equals?: JsonValue;
  contains?: string;
}

/** The registered form: `pattern` is a substring of the string-coerced value. */
export function denyToolParamRule(name: string, tool: string, key: string, pattern: string): PolicyRule {
  const reason = `param '${key}' matches denied pattern '${pattern}'`;
  const rare = rareCharacter(pattern);
  return {
    name,
    tool,
    evaluate(action: Action, _state, context) {
      if (action.tool !== tool) return undefined;
      const text = context.paramString(key);
      return text !== undefined && includesWith(text, pattern, rare) ? reason : undefined;
    },
  };
}

/**
 * The file form. The reason names the tool, the parameter and which test
 * fired — never the value, which is what such a rule exists to keep out of logs.
 */
export function denyToolParamConditionRule(tool: string, param: string, condition: ParamCondition): PolicyRule {
  const { equals, contains } = condition;
  const test =
    equals !== undefined && contains !== undefined
      ? "equals a denied value and contains a denied substring"
      : equals !== undefined
        ? "equals a denied value"
        : contains !== undefined
          ? "contains a denied substring"
          : "is present, which is denied";
  const reason = `parameter '${param}' of tool '${tool}' ${test}`;
  const rare = contains === undefined ? undefined : rareCharacter(contains);
  const rule: PolicyRule = {
    name: `deny_tool_param:${tool}.${param}`,
    tool,
    evaluate(action: Action, _state, context) {
      if (action.tool !== tool) return undefined;
      if (equals !== undefined) {
        const value = getOwn(action.parameters, param);
        if (value === undefined || !jsonEquals(value, equals)) return undefined;
      }
      if (contains !== undefined) {
        const text = context.paramString(param);
        return text !== undefined && includesWith(text, contains, rare) ? reason : undefined;
      }
      return equals !== undefined || getOwn(action.parameters, param) !== undefined ? reason : undefined;
    },
  };
  return contains !== undefined && equals === undefined ? markScanRule({ kind: "contains", param, needle: contains, reason }, rule) : rule;
}
