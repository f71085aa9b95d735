/** `policy.*`: the session's own policies beside the operator's read-only ones. */
import { method } from "./declaration.ts";
import { boolean, integer, listOf, object, optional, string } from "./schema.ts";

/** `"global"`, or the policy session a call was scoped to. */
const scope = { anyOf: [{ const: "global" }, object({ session_id: string }, ["session_id"])] } as const;

export const policyMethods = {
  "policy.register": method({
    role: "agent",
    summary: "Registers a policy (a PolicyDefinition: deny_tool, deny_tool_param, require_state, deny_command or trace_rule), globally or in a policy session.",
    params: object({ name: string, rule: string, session_id: optional("string") }, ["name", "rule"]),
    result: object({ registered: string, name: string, scope }, ["registered", "name", "scope"]),
  }),
  "policy.unregister": method({
    role: "agent",
    summary: "Removes one of the session's own policies (an operator rule is `unauthorized`).",
    params: object({ name: string, session_id: optional("string") }, ["name"]),
    result: object({ unregistered: string, removed: integer, scope }, ["unregistered", "removed", "scope"]),
  }),
  "policy.list": method({
    role: "agent",
    summary: "Every policy in force, the operator's marked read-only.",
    params: object({ session_id: optional("string") }),
    result: object(
      {
        policies: listOf(
          object({ name: string, description: string, owner: { enum: ["operator", "session"] }, read_only: boolean }, ["name", "owner", "read_only"]),
        ),
        scope,
      },
      ["policies", "scope"],
    ),
  }),
} as const;
