/**
 * An operator's oversight of the server: `supervision.*` (proposals parked
 * for a supervisor's decision, sent as `supervision.intent`), `host.*`
 * (`host.event` notifications about agents, approvals and intents) and
 * `session.clear_halt`.
 */
import { method } from "./declaration.ts";
import { anyObject, boolean, integer, listOf, object, optional, optionalListOf, string } from "./schema.ts";

const filter = object({ tools: optionalListOf(string), sessions: optionalListOf(string), min_reversibility: optional("string") });
const intent = object(
  { id: string, proposal_id: string, source: string, session_id: string, reversibility: string, created_at: string, actions: listOf(anyObject) },
  ["id", "proposal_id", "source", "reversibility", "created_at", "actions"],
);
const unsubscribed = object({ subscribed: { const: false }, was_subscribed: boolean }, ["subscribed", "was_subscribed"]);

export const oversightMethods = {
  "supervision.subscribe": method({
    role: "operator",
    summary: "Parks every matching proposal until this connection decides it (re-subscribing replaces the filter).",
    params: object({ filter: { anyOf: [filter, { type: "null" }] } }),
    result: object({ subscribed: { const: true }, decision_timeout_ms: integer, supervisors: integer, filter }, [
      "subscribed",
      "decision_timeout_ms",
      "supervisors",
      "filter",
    ]),
  }),
  "supervision.unsubscribe": method({
    role: "operator",
    summary: "Stops supervising on this connection.",
    params: object({}),
    result: unsubscribed,
  }),
  "supervision.pending": method({
    role: "operator",
    summary: "The parked intents, oldest first.",
    params: object({}),
    result: object({ intents: listOf(intent) }, ["intents"]),
  }),
  "supervision.decide": method({
    role: "operator",
    summary: "Allows, denies or escalates a parked intent (a reason is required unless allowing).",
    params: object({ intent_id: string, decision: object({ kind: { enum: ["allow", "deny", "escalate"] }, reason: optional("string") }, ["kind"]) }, [
      "intent_id",
      "decision",
    ]),
    result: object({ decided: { const: true } }, ["decided"]),
  }),
  "host.subscribe": method({
    role: "operator",
    summary: "Sends this connection `host.event` notifications (after server.handshake).",
    params: object({}),
    result: object({ subscribed: { const: true } }, ["subscribed"]),
  }),
  "host.unsubscribe": method({
    role: "operator",
    summary: "Stops this connection's `host.event` notifications.",
    params: object({}),
    result: unsubscribed,
  }),
  "session.clear_halt": method({
    role: "operator",
    summary: "Clears this connection's own halt latch.",
    params: object({}),
    result: object({ cleared: boolean, halted: { const: false } }, ["cleared", "halted"]),
  }),
} as const;
