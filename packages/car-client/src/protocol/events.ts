/** The audit log and its read-outs: `events.*`, `metrics.summary`. */
import { method } from "./declaration.ts";
import { anyObject, integer, ir, listOf, object, optional, optionalListOf, string } from "./schema.ts";

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
  "metrics.summary": method({
    role: "agent",
    summary: "Action counts and rates, latency, approvals, rejections, violations and cost from the log.",
    params: object({}),
    result: anyObject,
  }),
} as const;
