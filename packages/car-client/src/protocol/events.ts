/** The audit log and its read-outs: `events.*`, `metrics.summary`, `metrics.alerts`. */
import { method } from "./declaration.ts";
import { anyObject, integer, ir, listOf, number, object, optional, optionalListOf, string } from "./schema.ts";

/** The log's size; `spans` is 0 (spans go to the OpenTelemetry collector, not the log). */
const stats = object({ events: integer, spans: integer }, ["events", "spans"]);

export const eventMethods = {
  "events.count": method({
    role: "agent",
    summary: "The number of events in the log.",
    params: object({}),
    result: integer,
  }),
  "events.query": method({
    role: "agent",
    summary: "Events matching the filters, most recent first.",
    params: object({
      kinds: optionalListOf(string),
      action_id: optional("string"),
      proposal_id: optional("string"),
      since: optional("string"),
      until: optional("string"),
      data_matches: optional("object"),
      limit: optional("number"),
      tenant_id: optional("string"),
    }),
    result: object({ count: integer, events: listOf(ir("TraceEvent")) }, ["count", "events"]),
  }),
  "events.chain.verify": method({
    role: "agent",
    summary: "Checks the hash chain: `{ verified }`, or the first event that does not check (database only).",
    params: object({}),
    result: object({ verified: integer, tampered_at: integer, reason: string }),
  }),
  "events.chain.enable": method({
    role: "agent",
    summary: "The durable log is always chained; answers `{ ok: true }` (database only).",
    params: object({}),
    result: object({ ok: { const: true } }, ["ok"]),
  }),
  "events.retention": method({
    role: "operator",
    summary: "Reads or sets the retention policy `{ max_events?, max_age_secs? }` (SQLite only).",
    params: object({ policy: optional("object") }),
    result: object({ policy: anyObject, removed: integer }, ["policy"]),
  }),
  "events.cost_by_agent": method({
    role: "agent",
    summary: "Calls, tokens and cost per agent, from the multi-agent runs in the log.",
    params: object({}),
    result: listOf(object({ agent: string, calls: integer, tokens_in: integer, tokens_out: integer, cost_usd: { type: "number" } }, ["agent"])),
  }),
  "events.stats": method({
    role: "agent",
    summary: "The log's size: `{ events, spans }`.",
    params: object({}),
    result: stats,
  }),
  "events.truncate": method({
    role: "operator",
    summary: "Keeps the newest `maxEvents` events (an omitted bound cuts nothing), leaving a signed checkpoint (database only).",
    params: object({ maxEvents: optional("integer"), max_events: optional("integer"), maxSpans: optional("integer"), max_spans: optional("integer") }),
    result: object({ removedEvents: integer, removedSpans: integer, stats }, ["removedEvents", "removedSpans", "stats"]),
  }),
  "events.clear": method({
    role: "operator",
    summary: "Drops every event, leaving a signed checkpoint that says so (database only).",
    params: object({}),
    result: object({ removed: integer, stats }, ["removed", "stats"]),
  }),
  "metrics.alerts": method({
    role: "agent",
    summary: "The metrics summary and the thresholds it trips (cost, error rate, latency; min_actions before rates count).",
    params: object({
      max_cost_usd: optional("number"),
      max_error_rate: optional("number"),
      max_avg_latency_ms: optional("number"),
      min_actions: optional("integer"),
    }),
    result: object(
      {
        summary: anyObject,
        alerts: listOf(object({ kind: string, message: string, observed: number, threshold: number }, ["kind", "message", "observed", "threshold"])),
      },
      ["summary", "alerts"],
    ),
  }),
  "metrics.summary": method({
    role: "agent",
    summary: "Action counts and rates, latency, approvals, rejections, violations and cost from the log.",
    params: object({}),
    result: anyObject,
  }),
} as const;
