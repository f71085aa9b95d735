/**
 * `session.init`: declares a batch of tools and policies in one call. It is
 * optional (every method works on a fresh session); `client_id`, which the
 * newest reference requires, is accepted and checked when present so that
 * older clients that omit it still work.
 */
import type { JsonValue } from "@car/ir";
import type { MethodContext, MethodTable } from "../method.ts";
import { optionalArray, optionalString, paramsObject } from "../params.ts";
import { policyDefinition, registerAll, toolDefinition } from "./definitions.ts";

function sessionInit(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const p = paramsObject(params);
  optionalString(p, "client_id");
  const tools = (optionalArray(p, "tools") ?? []).map((t, i) => toolDefinition(t, `tools[${i}]`));
  const policies = (optionalArray(p, "policies") ?? []).map((d, i) => policyDefinition(d, `policies[${i}]`));
  registerAll(ctx.session, tools, policies);
  return { session_id: ctx.session.id, tools_registered: tools.length, policies_registered: policies.length };
}

export const sessionMethods: MethodTable = { "session.init": sessionInit };
