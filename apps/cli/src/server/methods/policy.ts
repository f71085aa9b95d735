/**
 * `policy.register` / `policy.unregister` / `policy.list`, and
 * `permission.classify`. Policies are enforced by the session's runtime
 * before each action dispatches; the operator's `<CAR_HOME>/policies` rules
 * are loaded into every session and listed here too.
 */
import type { JsonValue } from "@car/ir";
import { classifyProposal } from "@car/policy";
import type { MethodContext, MethodTable } from "../method.ts";
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
  const removed = ctx.session.runtime.unregisterPolicy(name);
  if (removed > 0) ctx.session.policyDescriptions.delete(name);
  return { unregistered: name, removed, scope: GLOBAL_SCOPE };
}

function list(_params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const runtime = ctx.session.runtime;
  const policies = [...new Set([...runtime.policies.names(), ...runtime.traceGate.names()])].map((name) => ({
    name,
    description: ctx.session.policyDescriptions.get(name) ?? "policy file rule (<CAR_HOME>/policies)",
  }));
  return { policies, scope: GLOBAL_SCOPE };
}

function classify(params: JsonValue | undefined): JsonValue {
  return classifyProposal(proposalParam(paramsObject(params))) as unknown as JsonValue;
}

export const policyMethods: MethodTable = {
  "policy.register": register,
  "policy.unregister": unregister,
  "policy.list": list,
  "permission.classify": classify,
};
