/**
 * `allow_tool_param`: the one allowlist. A call to `tool` passes only when
 * `param` is present and its string form is exactly one of `allow`; an absent
 * parameter, an empty list and an unlisted value all deny.
 */
import type { Action } from "@car/ir";
import type { PolicyRule } from "../engine.ts";

export function allowToolParamRule(tool: string, param: string, allow: readonly string[]): PolicyRule {
  const allowed = new Set(allow);
  return {
    name: `allow_tool_param:${tool}.${param}`,
    tool,
    evaluate(action: Action, _state, context) {
      if (action.tool !== tool) return undefined;
      const text = context.paramString(param);
      if (text === undefined) return `parameter '${param}' of tool '${tool}' is required by an allowlist and is absent`;
      if (allowed.size === 0) return `the allowlist for parameter '${param}' of tool '${tool}' is empty, so every call is denied`;
      return allowed.has(text) ? undefined : `parameter '${param}' of tool '${tool}' is not an allowlisted value`;
    },
  };
}
