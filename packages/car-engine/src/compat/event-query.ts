/**
 * `eventQuery`'s argument as node-api.md documents it: an EventQuery object
 * with the camelCase keys `kinds`, `actionId`, `proposalId`, `since`,
 * `until`, `dataMatches` and `limit`. The snake_case spellings the wire uses
 * (`action_id`, …) are read too, since earlier versions of this layer
 * documented those. Every key is checked and honoured; any other key, or one
 * filter given under both spellings, is `invalid_params` — a filter that
 * were silently dropped would widen the answer to everything (DECISIONS §25).
 */
import { CarError, isJsonObject } from "@car/ir";
import type { EventQuery } from "../events/event.ts";
import { jsonArg } from "./json-args.ts";

type Filter = "kinds" | "action_id" | "proposal_id" | "since" | "until" | "data_matches" | "limit";

/** Each accepted key and the filter it sets; camelCase first, as documented. */
const KEYS: Readonly<Record<string, Filter>> = {
  kinds: "kinds",
  actionId: "action_id",
  proposalId: "proposal_id",
  since: "since",
  until: "until",
  dataMatches: "data_matches",
  limit: "limit",
  action_id: "action_id",
  proposal_id: "proposal_id",
  data_matches: "data_matches",
};

const DOCUMENTED = "kinds, actionId, proposalId, since, until, dataMatches, limit";

function fail(problem: string): never {
  throw new CarError("invalid_params", `queryJson: ${problem}`);
}

function text(key: string, value: unknown): string {
  if (typeof value !== "string") fail(`${key} must be a string`);
  return value;
}

function timestamp(key: string, value: unknown): string {
  const t = text(key, value);
  if (Number.isNaN(Date.parse(t))) fail(`${key} must be an RFC 3339 timestamp, got ${JSON.stringify(t)}`);
  return t;
}

/** Reads `queryJson` into the engine's EventQuery, most recent first as node-api.md says. */
export function eventQueryArg(queryJson: unknown): EventQuery {
  const raw = jsonArg(queryJson, "queryJson");
  if (!isJsonObject(raw)) fail("must be a JSON object");
  const query: EventQuery = { order: "desc" };
  const seen = new Map<Filter, string>();
  for (const [key, value] of Object.entries(raw)) {
    const filter = Object.hasOwn(KEYS, key) ? KEYS[key] : undefined;
    if (filter === undefined) fail(`unknown key '${key}' (the filters are ${DOCUMENTED})`);
    const earlier = seen.get(filter);
    if (earlier !== undefined) fail(`'${key}' and '${earlier}' name the same filter; give one`);
    seen.set(filter, key);
    if (value === null) continue; // null is how a JSON caller leaves a filter unset
    switch (filter) {
      case "kinds":
        if (!Array.isArray(value)) fail(`${key} must be an array of event kinds`);
        query.kinds = value.map((k, i) => text(`${key}[${i}]`, k));
        break;
      case "action_id":
      case "proposal_id":
        query[filter] = text(key, value);
        break;
      case "since":
      case "until":
        query[filter] = timestamp(key, value);
        break;
      case "data_matches": {
        if (!isJsonObject(value)) fail(`${key} must be an object of data field → string`);
        const matches: Record<string, string> = {};
        for (const [field, wanted] of Object.entries(value)) matches[field] = text(`${key}.${field}`, wanted);
        query.data_matches = matches;
        break;
      }
      case "limit":
        if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) fail(`${key} must be a non-negative integer`);
        query.limit = value;
        break;
    }
  }
  return query;
}
