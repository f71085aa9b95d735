/**
 * `session.policy.open` / `session.policy.close`: per-context policy
 * sessions on this connection (policy-sessions.ts). The id is consumed by
 * `policy.register` / `policy.unregister` / `policy.list` and
 * `proposal.submit` `{ session_id }`; it is valid only on the connection
 * that opened it.
 */
import type { JsonValue } from "@car/ir";
import { type MethodContext, type MethodTable, agentMethod } from "../method.ts";
import { paramsObject, requireString } from "../params.ts";

function open(_params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  return { session_id: ctx.session.policySessions.open() };
}

function close(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const id = requireString(paramsObject(params), "session_id");
  return { closed: ctx.session.policySessions.close(ctx.session.runtime.policies, id) };
}

export const policySessionMethods: MethodTable = {
  "session.policy.open": agentMethod(open),
  "session.policy.close": agentMethod(close),
};
