/**
 * `allow_tool_param`: the one allowlist. A call to `tool` passes only when
 * `param` is present and its string form is exactly one of `allow`; an absent
 * parameter, an empty list and an unlisted value all deny.
 */
import { type Action, getOwn, stringCoerce } from "@car/ir";
import type { PolicyRule } from "../engine.ts";

export function allowToolParamRule(tool: string, param: string, allow: readonly string[]): PolicyRule {
  const allowed = new Set(allow);
  return {
    name: `allow_tool_param:${tool}.${param}`,
    tool,
    evaluate(action: Action) {
      if (action.tool !== tool) return undefined;
      const value = getOwn(action.parameters, param);
      if (value === undefined) return `parameter '${param}' of tool '${tool}' is required by an allowlist and is absent`;
      if (allowed.size === 0) return `the allowlist for parameter '${param}' of tool '${tool}' is empty, so every call is denied`;
      return allowed.has(stringCoerce(value)) ? undefined : `parameter '${param}' of tool '${tool}' is not an allowlisted value`;
    },
  };
}
