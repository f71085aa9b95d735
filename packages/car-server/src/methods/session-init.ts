/**
 * `session.init`: declares a batch of tools and policies in one call. It is
 * optional (every method works on a fresh session); `client_id`, which the
 * newest reference requires, is accepted and checked when present so that
 * older clients that omit it still work. An optional `tier` sets the
 * session's standing tier under `permission.set_tier`'s rules: it may
 * narrow, never rise above the server's standing tier.
 */
import type { JsonValue } from "@car/ir";
import { type MethodContext, type MethodTable, agentMethod } from "../method.ts";
import { optionalArray, optionalString, paramsObject } from "../params.ts";
import { moveTier, readTier } from "./approvals.ts";
import { policyDefinition, registerAll, toolDefinition } from "./definitions.ts";

function sessionInit(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const p = paramsObject(params);
  optionalString(p, "client_id");
  const tier = optionalString(p, "tier");
  const tools = (optionalArray(p, "tools") ?? []).map((t, i) => toolDefinition(t, `tools[${i}]`));
  const policies = (optionalArray(p, "policies") ?? []).map((d, i) => policyDefinition(d, `policies[${i}]`));
  // Before anything is registered: a refused tier leaves the session as it was.
  if (tier !== undefined) moveTier(ctx, readTier(tier, "tier"), "session.init");
  registerAll(ctx.session, tools, policies);
  return { session_id: ctx.session.id, tools_registered: tools.length, policies_registered: policies.length };
}

export const sessionMethods: MethodTable = { "session.init": agentMethod(sessionInit) };
