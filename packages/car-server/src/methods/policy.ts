/**
 * `policy.register` / `policy.unregister` / `policy.list`, and
 * `permission.classify`. Policies are enforced by the session's runtime
 * before each action dispatches; the operator's `<CAR_HOME>/policies` rules
 * are loaded into every session and listed here too, read-only: a session
 * removes only the rules it registered (`session-rules.ts`, DECISIONS.md §19).
 */
import type { JsonValue } from "@car/ir";
import { classifyProposal } from "@car/policy";
import { type MethodContext, type MethodTable, agentMethod } from "../method.ts";
import { paramsObject, requireString } from "../params.ts";
import { policyDefinition, registerAll } from "./definitions.ts";
import { proposalParam } from "./static-analysis.ts";

/** Policies are connection-wide; per-context scoping (`session.policy.open`) is not offered. */
const GLOBAL_SCOPE = "global";

function register(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const def = policyDefinition(paramsObject(params), "params");
  registerAll(ctx.session, [], [def]);
  // Both shapes the reference documents for the reply.
  return { registered: def.name, name: def.name, scope: GLOBAL_SCOPE };
}

function unregister(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const name = requireString(paramsObject(params), "name");
  return { unregistered: name, removed: ctx.session.rules.remove(name), scope: GLOBAL_SCOPE };
}

function list(_params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  return { policies: ctx.session.rules.list() as unknown as JsonValue, scope: GLOBAL_SCOPE };
}

function classify(params: JsonValue | undefined): JsonValue {
  return classifyProposal(proposalParam(paramsObject(params))) as unknown as JsonValue;
}

export const policyMethods: MethodTable = {
  "policy.register": agentMethod(register),
  "policy.unregister": agentMethod(unregister),
  "policy.list": agentMethod(list),
  "permission.classify": agentMethod(classify),
};
