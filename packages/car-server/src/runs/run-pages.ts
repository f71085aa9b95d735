/**
 * `runs.pagination.v1`: a connection that negotiates it sends the stricter
 * paginated params to `runs.list`, `runs.get_trace` and `runs.subscribe` —
 * `cursor` and `limit` required, `limit` from 1 to 500 — and one that does
 * not keeps the legacy shapes (the handler picks by the capability, never by
 * the payload: reference websocket-core.md § Pagination). Where the
 * reference ignores a `limit` sent without negotiating, this server refuses
 * it (DECISIONS §25: no setting accepted and ignored).
 *
 * A `runs.list` cursor is opaque: the sort key of the last run of the page
 * before (`listPage`'s order, newest first), so a run opened meanwhile never
 * shifts a page already read. `""` starts at the newest run. A cursor this
 * server did not issue is `invalid_params`, never a silently empty page.
 */
import { CarError, getOwn, isJsonObject, type JsonObject } from "@car/ir";
import type { RunPageKey, RunSummary } from "@car/engine";
import { invalidParams } from "../params.ts";

export const RUNS_PAGINATION_CAPABILITY = "runs.pagination.v1";
export const MAX_PAGE = 500;

/** The required `limit` of a paginated call: an integer from 1 to 500. */
export function pageLimit(p: JsonObject, method: string): number {
  const limit = getOwn(p, "limit");
  if (limit === undefined || limit === null) throw invalidParams(`${method} with ${RUNS_PAGINATION_CAPABILITY} negotiated requires limit (1 to ${MAX_PAGE})`);
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw invalidParams(`limit must be an integer from 1 to ${MAX_PAGE}`);
  }
  return limit;
}

/** The required integer `cursor` of a paginated `runs.get_trace` / `runs.subscribe` (0: the beginning). */
export function recordCursor(p: JsonObject, method: string): number {
  const cursor = getOwn(p, "cursor");
  if (cursor === undefined || cursor === null)
    throw invalidParams(`${method} with ${RUNS_PAGINATION_CAPABILITY} negotiated requires cursor (0 for the beginning)`);
  if (typeof cursor !== "number" || !Number.isInteger(cursor) || cursor < 0) throw invalidParams("cursor must be a non-negative integer");
  return cursor;
}

/** The cursor that continues after `run`. */
export function listCursor(run: RunSummary): string {
  return Buffer.from(JSON.stringify([run.started_at, run.run_id]), "utf8").toString("base64url");
}

/** The page key a `runs.list` cursor stands for; `""` is the first page. */
export function readListCursor(p: JsonObject): RunPageKey | undefined {
  const cursor = getOwn(p, "cursor");
  if (cursor === undefined || cursor === null)
    throw invalidParams(`runs.list with ${RUNS_PAGINATION_CAPABILITY} negotiated requires cursor ("" for the first page)`);
  if (typeof cursor !== "string") throw invalidParams('cursor must be a string: the next_cursor of the page before, or ""');
  if (cursor === "") return undefined;
  const refused = () =>
    new CarError("invalid_params", 'invalid params: cursor is not one runs.list issued (pass a page\'s next_cursor, or "" for the first page)');
  if (cursor.length > 1024 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw refused();
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw refused();
  }
  if (!Array.isArray(key) || key.length !== 2 || typeof key[0] !== "string" || typeof key[1] !== "string" || Number.isNaN(Date.parse(key[0]))) throw refused();
  return { started_at: key[0], run_id: key[1] };
}

/**
 * A connection that did not negotiate pagination sends the legacy shapes; a
 * `limit` (or `runs.subscribe`'s `cursor`) there would be ignored, so it is
 * refused instead, naming the capability (DECISIONS §25).
 */
export function refuseUnnegotiated(p: JsonObject, fields: readonly string[], method: string): void {
  const sent = fields.find((f) => getOwn(p, f) !== undefined && getOwn(p, f) !== null);
  if (sent !== undefined) throw invalidParams(`${method}: ${sent} needs ${RUNS_PAGINATION_CAPABILITY} negotiated in server.handshake`);
}

/** Refuses a field the paginated shape does not take. */
export function pageFields(p: JsonObject, allowed: readonly string[], method: string): void {
  if (!isJsonObject(p)) return;
  const unknown = Object.keys(p).find((k) => !allowed.includes(k));
  if (unknown !== undefined)
    throw invalidParams(`${method} with ${RUNS_PAGINATION_CAPABILITY} takes { ${allowed.join(", ")} }: unknown field '${unknown.slice(0, 64)}'`);
}
