/**
 * The host's view of the server: `host.subscribe` (after `server.handshake`,
 * as the reference requires) sends this connection `host.event`
 * notifications — agents registered and unregistered, status changes,
 * approvals requested and resolved, supervision intents parked and decided —
 * until it calls `host.unsubscribe` or disconnects. `session.clear_halt`
 * clears this connection's own halt latch (reference § A.7).
 */
import type { JsonValue } from "@car/ir";
import { type MethodContext, type MethodTable, operatorMethod } from "../method.ts";

async function subscribe(_params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const peer = ctx.session.peer;
  await ctx.session.options.oversight.host.subscribe(ctx.session, (event) => peer.notify("host.event", event));
  return { subscribed: true };
}

function unsubscribe(_params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  return { subscribed: false, was_subscribed: ctx.session.options.oversight.host.unsubscribe(ctx.session) };
}

/** Clears this exact connection's latch; it cannot reach another connection's (those recover by reconnecting). */
function clearHalt(_params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const cleared = ctx.session.halted;
  ctx.session.halted = false;
  return { cleared, halted: false };
}

export const hostMethods: MethodTable = {
  "host.subscribe": operatorMethod(subscribe, { handshake: true }),
  "host.unsubscribe": operatorMethod(unsubscribe),
  "session.clear_halt": operatorMethod(clearHalt),
};
