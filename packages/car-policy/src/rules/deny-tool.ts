/** `deny_tool`: refuse every action that calls one tool, whatever its parameters. */
import type { Action } from "@car/ir";
import type { PolicyRule } from "../engine.ts";

export function denyToolRule(name: string, tool: string): PolicyRule {
  const reason = `tool '${tool}' is denied by policy`;
  return { name, tool, evaluate: (action: Action) => (action.tool === tool ? reason : undefined) };
}
