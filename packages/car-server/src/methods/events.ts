/**
 * `events.query` / `events.count` over the session's audit log. A query is
 * a conjunction of optional filters and comes back most recent first, as
 * the reference specifies. The log records direct writes of tenant keys
 * (`state_changed`, with the value), so a query is tenant-scoped like
 * `state.*`: the caller sees an event about a state key only when the key is
 * visible in its scope. `events.count` counts the whole log; a count reveals
 * no key or value.
 */
import { isJsonObject, type JsonValue } from "@car/ir";
import type { CarEvent, EventQuery } from "@car/engine";
import type { TenantScope } from "../tenancy.ts";
import { type MethodContext, type MethodTable, agentMethod } from "../method.ts";
import { invalidParams, optionalArray, optionalNumber, optionalObject, optionalString, paramsObject, stringArray } from "../params.ts";

function readQuery(params: JsonValue | undefined): EventQuery {
  const p = paramsObject(params);
  const query: EventQuery = { order: "desc" };
  const kinds = optionalArray(p, "kinds");
  if (kinds !== undefined) query.kinds = stringArray(kinds, "kinds");
  for (const field of ["action_id", "proposal_id", "since", "until"] as const) {
    const v = optionalString(p, field);
    if (v === undefined) continue;
    if ((field === "since" || field === "until") && Number.isNaN(Date.parse(v))) throw invalidParams(`${field} must be an RFC 3339 timestamp`);
    query[field] = v;
  }
  const matches = optionalObject(p, "data_matches");
  if (matches !== undefined) {
    for (const [k, v] of Object.entries(matches)) if (typeof v !== "string") throw invalidParams(`data_matches.${k} must be a string`);
    query.data_matches = matches as Record<string, string>;
  }
  const limit = optionalNumber(p, "limit");
  if (limit !== undefined) {
    if (!Number.isInteger(limit) || limit < 0) throw invalidParams("limit must be a non-negative integer");
    query.limit = limit;
  }
  return query;
}

/** Whether the event names a state key the caller's scope cannot see. */
function hidden(event: CarEvent, scope: TenantScope): boolean {
  const key = event.data["key"];
  return typeof key === "string" && scope.visible(key) === undefined;
}

function query(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const q = readQuery(params);
  const log = ctx.session.runtime.events;
  let events = log.query(q).filter((e) => !hidden(e, ctx.tenant));
  // A hidden event inside the limit would shorten the page: read past it, then cut.
  if (q.limit !== undefined && events.length < q.limit) {
    const { limit, ...unlimited } = q;
    events = log
      .query(unlimited)
      .filter((e) => !hidden(e, ctx.tenant))
      .slice(0, limit);
  }
  return { count: events.length, events: events as unknown as JsonValue };
}

/** The whole log's size; filters are honoured when given (an extension: the reference takes no params). */
function count(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const log = ctx.session.runtime.events;
  return isJsonObject(params) && Object.keys(params).length > 0 ? log.count(readQuery(params)) : log.count();
}

export const eventMethods: MethodTable = { "events.query": agentMethod(query, { tenancy: "tenant_id" }), "events.count": agentMethod(count) };
