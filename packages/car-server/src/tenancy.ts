/**
 * Tenancy as a boundary. A tenant's keys are stored as `tenant:<id>:<key>`
 * and are reachable only through that tenant: `state.*` with its
 * `tenant_id`. So a tenant id is a plain token (no `:`, which would let
 * `alice:x` write into `alice`'s namespace), a call without a tenant cannot
 * name a `tenant:` key, and a proposal — which runs with no tenant — can
 * neither name one nor compute a state key at run time (an `$id.output`
 * reference as a state action's key), since what admission cannot read it
 * cannot vouch for.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import {
  type ActionProposal,
  CarError,
  effectiveReadSet,
  effectiveWriteSet,
  getOwn,
  isJsonObject,
  type JsonObject,
  type JsonValue,
  parseOutputRef,
} from "@car/ir";
import { invalidParams } from "./params.ts";

export const TENANT_PREFIX = "tenant:";
const TENANT_ID = /^[A-Za-z0-9_.-]{1,128}$/;

export interface TenantScope {
  /** The tenant's id; undefined for the unscoped view. */
  readonly id: string | undefined;
  /** The stored key for a caller's key. */
  stored(key: string): string;
  /** The caller's key for a stored one, or undefined when the caller may not see it. */
  visible(stored: string): string | undefined;
}

/** The view of a caller without a tenant: unscoped keys only. */
export const UNSCOPED: TenantScope = {
  id: undefined,
  stored(key) {
    if (key.startsWith(TENANT_PREFIX)) {
      throw new CarError("unauthorized", `state key '${key}' is in the tenant namespace: pass tenant_id to reach a tenant's keys`, { key });
    }
    return key;
  },
  visible: (key) => (key.startsWith(TENANT_PREFIX) ? undefined : key),
};

/** The scope a `state.*` call works in: its `tenant_id` (validated), or none. */
export function tenantScope(tenantId: string | undefined): TenantScope {
  if (tenantId === undefined || tenantId === "") return UNSCOPED;
  if (!TENANT_ID.test(tenantId))
    throw invalidParams(`tenant_id must be 1-128 characters of A-Z, a-z, 0-9, '_', '.', '-', got ${JSON.stringify(tenantId.slice(0, 140))}`);
  const prefix = `${TENANT_PREFIX}${tenantId}:`;
  return { id: tenantId, stored: (key) => prefix + key, visible: (key) => (key.startsWith(prefix) ? key.slice(prefix.length) : undefined) };
}

/**
 * The tenant a proposal runs for (`proposal.submit { scope: { tenantId } }`),
 * held for the run's async context so the admission guard holds the run to
 * that tenant's keys and no other run's.
 */
const tenantExecution = new AsyncLocalStorage<string>();

/** Runs `work` (a proposal) for `tenantId`, or unscoped when undefined. */
export function withinTenant<T>(tenantId: string | undefined, work: () => Promise<T>): Promise<T> {
  return tenantId === undefined ? work() : tenantExecution.run(tenantId, work);
}

/** A validated `scope.tenantId`'s prefix, or undefined for none. */
export function scopeTenant(tenantId: string | undefined): string | undefined {
  if (tenantId === undefined) return undefined;
  tenantScope(tenantId);
  return tenantId;
}

/**
 * The proposal input with every state key it names moved into the tenant's
 * namespace: `read_set`, `write_set`, `state_dependencies`, assumption and
 * precondition keys, `expected_effects`, a state action's `key` / `keys`, in
 * compensations too. What this misses the admission guard refuses, since a
 * scoped run may name no key outside its tenant.
 */
export function scopedProposalInput(input: JsonValue, tenantId: string): JsonValue {
  const scope = tenantScope(tenantId);
  const keyed = (value: JsonValue | undefined): JsonValue | undefined => (typeof value === "string" ? scope.stored(value) : value);
  const keyList = (value: JsonValue | undefined): JsonValue | undefined => (Array.isArray(value) ? value.map((k) => keyed(k) ?? k) : value);
  const keyedEntries = (value: JsonValue | undefined): JsonValue | undefined =>
    Array.isArray(value) ? value.map((e) => (isJsonObject(e) && typeof e["key"] === "string" ? { ...e, key: scope.stored(e["key"]) } : e)) : value;
  const action = (a: JsonValue): JsonValue => {
    if (!isJsonObject(a)) return a;
    const out: JsonObject = { ...a };
    for (const field of ["read_set", "write_set", "state_dependencies"]) if (field in out) out[field] = keyList(out[field])!;
    for (const field of ["assumptions", "preconditions"]) if (field in out) out[field] = keyedEntries(out[field])!;
    if (isJsonObject(out["expected_effects"])) {
      out["expected_effects"] = Object.fromEntries(Object.entries(out["expected_effects"]).map(([k, v]) => [scope.stored(k), v]));
    }
    if ((out["type"] === "state_write" || out["type"] === "state_read") && isJsonObject(out["parameters"])) {
      const params: JsonObject = { ...out["parameters"] };
      if ("key" in params) params["key"] = keyed(params["key"])!;
      if ("keys" in params) params["keys"] = keyList(params["keys"])!;
      out["parameters"] = params;
    }
    if (out["compensation"] !== undefined) out["compensation"] = action(out["compensation"]);
    return out;
  };
  if (!isJsonObject(input) || !Array.isArray(input["actions"])) return input;
  return { ...input, actions: input["actions"].map(action) };
}

function refuse(actionId: string, why: string, tenantId?: string): never {
  const where =
    tenantId === undefined
      ? "proposals run without a tenant and cannot reach tenant-scoped keys"
      : `this proposal runs for tenant '${tenantId}' and reaches only its keys`;
  throw new CarError("unauthorized", `action '${actionId}' ${why}: ${where}`, { action_id: actionId });
}

/**
 * Refuses a proposal that reaches outside its tenancy: unscoped, a proposal
 * may name no tenant key; run for a tenant (`scope.tenantId`), every key it
 * names must be that tenant's. Either way it may not compute a state key at
 * run time.
 */
export function checkProposalTenancy(proposal: ActionProposal, tenantId: string | undefined = tenantExecution.getStore()): void {
  const prefix = tenantId === undefined ? undefined : `${TENANT_PREFIX}${tenantId}:`;
  // Within a tenant, a key that names a tenant key itself (`tenant:bob:x` sent as `tenant:alice:tenant:bob:x`) is outside too.
  const outside = (key: string): boolean =>
    prefix === undefined ? key.startsWith(TENANT_PREFIX) : !key.startsWith(prefix) || key.slice(prefix.length).startsWith(TENANT_PREFIX);
  const why = (key: string): string => (prefix === undefined ? `names the tenant key '${key}'` : `names the key '${key}' outside its tenant`);
  for (const action of proposal.actions) {
    const keys = [...effectiveReadSet(action), ...effectiveWriteSet(action), ...action.preconditions.map((p) => p.key)];
    for (const key of keys) if (outside(key)) refuse(action.id, why(key), tenantId);
    if (action.type !== "state_write" && action.type !== "state_read") continue;
    const key = getOwn(action.parameters, "key");
    const list = getOwn(action.parameters, "keys");
    const named = [key, ...(Array.isArray(list) ? list : [])];
    for (const k of named) {
      if (typeof k !== "string") continue;
      const computed = parseOutputRef(k) !== undefined || (prefix !== undefined && parseOutputRef(k.slice(prefix.length)) !== undefined);
      if (computed) refuse(action.id, `computes its state key at run time ('${k}')`, tenantId);
      if (outside(k)) refuse(action.id, why(k), tenantId);
    }
  }
}
