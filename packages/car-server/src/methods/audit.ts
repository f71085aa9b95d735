/**
 * The durable audit log's `events.*` extras: `events.chain.verify` (the
 * hash chain, over every stored event of the database), `events.chain.enable`
 * (the durable log is always chained, so it only acknowledges) and
 * `events.retention` (bounds the log; what remains still verifies because
 * the chain restarts from a signed checkpoint). They need a database.
 */
import { CarError, type JsonObject, type JsonValue } from "@car/ir";
import type { RetentionPolicy } from "@car/engine";
import { type MethodContext, type MethodTable, agentMethod, operatorMethod } from "../method.ts";
import { invalidParams, optionalNumber, optionalObject, paramsObject } from "../params.ts";
import { requireStore, type ServeStore } from "../serve-store.ts";

/** `{ verified: n }`, or `{ tampered_at: seq, reason }` for the first event whose bytes, hash or link do not check. */
async function verify(_params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const report = await requireStore(ctx.session.options.store, "events.chain.verify").verifyChain();
  return report.ok ? { verified: report.verified } : { tampered_at: report.broken.seq, reason: report.broken.reason };
}

function enable(_params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  requireStore(ctx.session.options.store, "events.chain.enable");
  return { ok: true };
}

/** The policy as the wire shows it (`max_age_secs`, as the reference names it). */
interface WirePolicy {
  max_events?: number;
  max_age_secs?: number;
}

/** The retention policy installed on each open database by this server process (until it stops). */
const installed = new WeakMap<ServeStore, WirePolicy>();

function readPolicy(p: JsonObject): WirePolicy {
  const policy: WirePolicy = {};
  const maxEvents = optionalNumber(p, "max_events");
  if (maxEvents !== undefined) {
    if (!Number.isInteger(maxEvents) || maxEvents < 0) throw invalidParams("policy.max_events must be a non-negative integer");
    policy.max_events = maxEvents;
  }
  const maxAge = optionalNumber(p, "max_age_secs");
  if (maxAge !== undefined) {
    if (!(maxAge >= 0)) throw invalidParams("policy.max_age_secs must be a non-negative number");
    policy.max_age_secs = maxAge;
  }
  return policy;
}

function storePolicy(policy: WirePolicy): RetentionPolicy {
  return {
    mode: "truncate",
    ...(policy.max_events !== undefined ? { max_events: policy.max_events } : {}),
    ...(policy.max_age_secs !== undefined ? { max_age_ms: policy.max_age_secs * 1000 } : {}),
  };
}

/** Applies the installed policy now; returns how many events it removed (0 without a policy). */
export async function applyRetention(store: ServeStore | undefined): Promise<number> {
  const policy = store === undefined ? undefined : installed.get(store);
  if (store === undefined || policy === undefined || store.enforceRetention === undefined) return 0;
  if (policy.max_events === undefined && policy.max_age_secs === undefined) return 0;
  return (await store.enforceRetention(Date.now(), storePolicy(policy))).removed;
}

async function retention(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const store = requireStore(ctx.session.options.store, "events.retention");
  const given = optionalObject(paramsObject(params), "policy");
  if (given === undefined) return { policy: (installed.get(store) ?? {}) as JsonObject };
  if (store.enforceRetention === undefined) throw new CarError("storage_error", "events.retention: this store cannot cut its log");
  const policy = readPolicy(given);
  installed.set(store, policy);
  return { policy: policy as JsonObject, removed: await applyRetention(store) };
}

/** The log's size: `events` stored now; `spans` is 0 — spans go to the OpenTelemetry collector (`--otel`), not the log. */
function stats(ctx: MethodContext): JsonObject {
  return { events: ctx.session.runtime.events.count(), spans: 0 };
}

/** The store's cut for an operator act, which leaves a signed checkpoint chained to the earlier ones (DECISIONS §24). */
async function cutLog(ctx: MethodContext, method: string, maxEvents: number, act: "truncate" | "clear"): Promise<number> {
  const store = requireStore(ctx.session.options.store, method);
  if (store.enforceRetention === undefined) throw new CarError("storage_error", `${method}: this store cannot cut its log`);
  return (await store.enforceRetention(Date.now(), { mode: "truncate", max_events: maxEvents, act })).removed;
}

/** `events.truncate { maxEvents?, maxSpans? }`: keeps the newest `maxEvents` events; an omitted bound cuts nothing. */
async function truncate(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = paramsObject(params);
  const maxEvents = optionalNumber(p, "maxEvents") ?? optionalNumber(p, "max_events");
  const maxSpans = optionalNumber(p, "maxSpans") ?? optionalNumber(p, "max_spans");
  for (const [name, value] of [
    ["maxEvents", maxEvents],
    ["maxSpans", maxSpans],
  ] as const) {
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) throw invalidParams(`${name} must be a non-negative integer`);
  }
  requireStore(ctx.session.options.store, "events.truncate");
  let removed = 0;
  // Keeping 0 events is clearing: the same act under the name that says what it did.
  if (maxEvents !== undefined) removed = await cutLog(ctx, "events.truncate", maxEvents, maxEvents === 0 ? "clear" : "truncate");
  return { removedEvents: removed, removedSpans: 0, stats: stats(ctx) };
}

/** `events.clear`: drops every event; the chained checkpoint it leaves says so. */
async function clear(_params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const removed = await cutLog(ctx, "events.clear", 0, "clear");
  return { removed, stats: stats(ctx) };
}

export const auditMethods: MethodTable = {
  "events.chain.verify": agentMethod(verify),
  "events.chain.enable": agentMethod(enable),
  "events.retention": operatorMethod(retention),
  "events.stats": agentMethod((_params, ctx) => stats(ctx)),
  "events.truncate": operatorMethod(truncate),
  "events.clear": operatorMethod(clear),
};
