/** `policy.*`: the session's own policies beside the operator's read-only ones. */
import { method } from "./declaration.ts";
import { boolean, integer, listOf, object, string } from "./schema.ts";

export const policyMethods = {
  "policy.register": method({
    role: "agent",
    summary: "Registers a policy (a PolicyDefinition: deny_tool, deny_tool_param, require_state, deny_command or trace_rule).",
    params: object({ name: string, rule: string }, ["name", "rule"]),
    result: object({ registered: string, name: string, scope: string }, ["registered", "name", "scope"]),
  }),
  "policy.unregister": method({
    role: "agent",
    summary: "Removes one of the session's own policies (an operator rule is `unauthorized`).",
    params: object({ name: string }, ["name"]),
    result: object({ unregistered: string, removed: integer, scope: string }, ["unregistered", "removed", "scope"]),
  }),
  "policy.list": method({
    role: "agent",
    summary: "Every policy in force, the operator's marked read-only.",
    params: object({}),
    result: object(
      {
        policies: listOf(
          object({ name: string, description: string, owner: { enum: ["operator", "session"] }, read_only: boolean }, ["name", "owner", "read_only"]),
        ),
        scope: string,
      },
      ["policies", "scope"],
    ),
  }),
} as const;
