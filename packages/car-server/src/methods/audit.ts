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
  if (store.enforceRetention === undefined) throw new CarError("storage_error", "events.retention: the PostgreSQL store has no retention (SQLite only)");
  const policy = readPolicy(given);
  installed.set(store, policy);
  return { policy: policy as JsonObject, removed: await applyRetention(store) };
}

export const auditMethods: MethodTable = {
  "events.chain.verify": agentMethod(verify),
  "events.chain.enable": agentMethod(enable),
  "events.retention": operatorMethod(retention),
};
