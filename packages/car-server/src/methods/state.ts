/**
 * `state.get` / `set` / `exists` / `keys` / `snapshot` on the session's
 * state store. An optional `tenant_id` scopes a call to the keys stored under
 * `tenant:<id>:`; without it only unscoped keys are reachable, so tenants and
 * unscoped callers never see each other's keys (the reference's contract,
 * enforced in `tenancy.ts`). The dispatcher validates `tenant_id` and hands
 * each call its scope as `ctx.tenant` (a `tenant_id` method in the table).
 */
import { emptyMap, getOwn, type JsonValue, setOwn } from "@car/ir";
import { type MethodContext, type MethodTable, agentMethod } from "../method.ts";
import { paramsObject, requireString } from "../params.ts";

function get(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const p = paramsObject(params);
  return ctx.session.runtime.state.get(ctx.tenant.stored(requireString(p, "key"))) ?? null;
}

function set(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const p = paramsObject(params);
  const key = ctx.tenant.stored(requireString(p, "key"));
  const value = getOwn(p, "value") ?? null;
  // Every store keeps its state in memory: the value counts against the server's bound until the key is written again.
  const { heldState, limits } = ctx.session.options;
  heldState.replace(ctx.session.stateHolder, key, Buffer.byteLength(JSON.stringify(value)), limits.maxHeldBytesPerConnection);
  ctx.session.runtime.state.set(key, value);
  return "ok";
}

function exists(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const p = paramsObject(params);
  return ctx.session.runtime.state.exists(ctx.tenant.stored(requireString(p, "key")));
}

function keys(_params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const s = ctx.tenant;
  return ctx.session.runtime.state.keys().flatMap((k) => s.visible(k) ?? []);
}

function snapshot(_params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const s = ctx.tenant;
  const all = ctx.session.runtime.state.snapshot();
  const out = emptyMap();
  for (const k of Object.keys(all)) {
    const visible = s.visible(k);
    if (visible !== undefined) setOwn(out, visible, all[k] as JsonValue);
  }
  return out;
}

export const stateMethods: MethodTable = {
  "state.get": agentMethod(get, { tenancy: "tenant_id" }),
  "state.set": agentMethod(set, { tenancy: "tenant_id", resources: ["state_values"] }),
  "state.exists": agentMethod(exists, { tenancy: "tenant_id" }),
  "state.keys": agentMethod(keys, { tenancy: "tenant_id" }),
  "state.snapshot": agentMethod(snapshot, { tenancy: "tenant_id" }),
};
