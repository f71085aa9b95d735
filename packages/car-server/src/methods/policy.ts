/**
 * `policy.register` / `policy.unregister` / `policy.list`, and
 * `permission.classify`. Policies are enforced by the session's runtime
 * before each action dispatches; the operator's `<CAR_HOME>/policies` rules
 * are loaded into every session and listed here too, read-only: a session
 * removes only the rules it registered (`session-rules.ts`, DECISIONS.md §19).
 */
import { CarError, type JsonValue } from "@car/ir";
import { classifyProposal } from "@car/policy";
import { type MethodContext, type MethodTable, agentMethod } from "../method.ts";
import { optionalString, paramsObject, requireString } from "../params.ts";
import { policyDefinition, registerAll } from "./definitions.ts";
import { proposalParam } from "./static-analysis.ts";

/** Without `session_id` a policy is connection-wide; with one, it is scoped to that policy session (`session.policy.open`). */
const GLOBAL_SCOPE = "global";

function register(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const { session_id, ...raw } = paramsObject(params);
  const scope = optionalString({ session_id: session_id ?? null }, "session_id");
  const def = policyDefinition(raw, "params");
  if (scope === undefined) {
    registerAll(ctx.session, [], [def]);
    // Both shapes the reference documents for the reply.
    return { registered: def.name, name: def.name, scope: GLOBAL_SCOPE };
  }
  const session = ctx.session;
  session.rules.checkName(def.name);
  const max = session.options.limits.maxPoliciesPerConnection;
  if (session.rules.ownCount + session.policySessions.ruleCount + 1 > max) {
    throw new CarError("budget_exceeded", `this connection would have more than ${max} policies (--max-policies); unregister some first`);
  }
  session.policySessions.register(session.runtime.policies, scope, def);
  return { registered: def.name, name: def.name, scope: { session_id: scope } };
}

function unregister(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const p = paramsObject(params);
  const name = requireString(p, "name");
  const scope = optionalString(p, "session_id");
  if (scope !== undefined) {
    return { unregistered: name, removed: ctx.session.policySessions.unregister(ctx.session.runtime.policies, scope, name), scope: { session_id: scope } };
  }
  return { unregistered: name, removed: ctx.session.rules.remove(name), scope: GLOBAL_SCOPE };
}

function list(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const scope = optionalString(paramsObject(params), "session_id");
  if (scope !== undefined) return { policies: ctx.session.policySessions.list(scope), scope: { session_id: scope } };
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
