/**
 * `supervision.*` (reference websocket-core.md § supervision): an operator
 * connection supervises every session's proposals. `subscribe` registers
 * this connection with a filter (re-subscribing replaces it), matching
 * proposals are parked at admission and arrive as `supervision.intent`
 * notifications, `pending` lists what is parked (oldest first) and
 * `decide` answers one. The gate itself is supervision/supervision-hub.ts;
 * with `--db postgres://…` these see and decide every server's intents.
 */
import { getOwn, type JsonValue } from "@car/ir";
import { filterJson, parseIntentFilter, type SupervisionDecision } from "@car/engine";
import { type MethodContext, type MethodTable, operatorMethod } from "../method.ts";
import { invalidParams, optionalString, paramsObject, requireObject, requireString } from "../params.ts";

async function subscribe(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const filter = parseIntentFilter(getOwn(paramsObject(params), "filter"));
  const hub = ctx.session.options.oversight.supervision;
  const peer = ctx.session.peer;
  await hub.subscribe(ctx.session, filter, (intent) => peer.notify("supervision.intent", intent));
  return { subscribed: true, decision_timeout_ms: hub.decisionTimeoutMs, supervisors: hub.supervisors, filter: filterJson(filter) };
}

function unsubscribe(_params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  return { subscribed: false, was_subscribed: ctx.session.options.oversight.supervision.unsubscribe(ctx.session) };
}

async function pending(_params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  return { intents: await ctx.session.options.oversight.supervision.pending() };
}

const KINDS = ["allow", "deny", "escalate"] as const;

async function decide(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = paramsObject(params);
  const intentId = requireString(p, "intent_id");
  const d = requireObject(p, "decision");
  const kind = requireString(d, "kind");
  if (!(KINDS as readonly string[]).includes(kind)) throw invalidParams(`decision.kind must be one of ${KINDS.join(", ")}, got '${kind.slice(0, 40)}'`);
  const reason = optionalString(d, "reason");
  if (kind !== "allow" && (reason === undefined || reason.trim() === "")) throw invalidParams(`decision.reason is required for ${kind}`);
  const reviewer = ctx.session.principal;
  const decision: SupervisionDecision =
    kind === "allow" ? { kind, reviewer, ...(reason !== undefined ? { reason } : {}) } : { kind: kind as "deny" | "escalate", reviewer, reason: reason! };
  await ctx.session.options.oversight.supervision.decide(intentId, decision);
  return { decided: true };
}

export const supervisionMethods: MethodTable = {
  "supervision.subscribe": operatorMethod(subscribe),
  "supervision.unsubscribe": operatorMethod(unsubscribe),
  "supervision.pending": operatorMethod(pending),
  "supervision.decide": operatorMethod(decide),
};
