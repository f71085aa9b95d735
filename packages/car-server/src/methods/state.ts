/**
 * `state.get` / `set` / `exists` / `keys` / `snapshot` on the session's
 * state store. An optional `tenant_id` scopes a call to the keys stored under
 * `tenant:<id>:`; without it only unscoped keys are reachable, so tenants and
 * unscoped callers never see each other's keys (the reference's contract,
 * enforced in `tenancy.ts`).
 */
import { emptyMap, getOwn, type JsonObject, type JsonValue, setOwn } from "@car/ir";
import type { MethodContext, MethodTable } from "../method.ts";
import { optionalString, paramsObject, requireString } from "../params.ts";
import { type TenantScope, tenantScope } from "../tenancy.ts";

/** The caller's tenant scope (`tenancy.ts`): its `tenant_id`, validated, or none. */
function scope(p: JsonObject): TenantScope {
  return tenantScope(optionalString(p, "tenant_id"));
}

function get(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const p = paramsObject(params);
  return ctx.session.runtime.state.get(scope(p).stored(requireString(p, "key"))) ?? null;
}

function set(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const p = paramsObject(params);
  const key = scope(p).stored(requireString(p, "key"));
  ctx.session.runtime.state.set(key, getOwn(p, "value") ?? null);
  return "ok";
}

function exists(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const p = paramsObject(params);
  return ctx.session.runtime.state.exists(scope(p).stored(requireString(p, "key")));
}

function keys(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const s = scope(paramsObject(params));
  return ctx.session.runtime.state.keys().flatMap((k) => s.visible(k) ?? []);
}

function snapshot(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const s = scope(paramsObject(params));
  const all = ctx.session.runtime.state.snapshot();
  const out = emptyMap();
  for (const k of Object.keys(all)) {
    const visible = s.visible(k);
    if (visible !== undefined) setOwn(out, visible, all[k] as JsonValue);
  }
  return out;
}

export const stateMethods: MethodTable = {
  "state.get": get,
  "state.set": set,
  "state.exists": exists,
  "state.keys": keys,
  "state.snapshot": snapshot,
};
