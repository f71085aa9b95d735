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
import { type ActionProposal, CarError, effectiveReadSet, effectiveWriteSet, getOwn, parseOutputRef } from "@car/ir";
import { invalidParams } from "./params.ts";

export const TENANT_PREFIX = "tenant:";
const TENANT_ID = /^[A-Za-z0-9_.-]{1,128}$/;

export interface TenantScope {
  /** The stored key for a caller's key. */
  stored(key: string): string;
  /** The caller's key for a stored one, or undefined when the caller may not see it. */
  visible(stored: string): string | undefined;
}

/** The view of a caller without a tenant: unscoped keys only. */
export const UNSCOPED: TenantScope = {
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
  return { stored: (key) => prefix + key, visible: (key) => (key.startsWith(prefix) ? key.slice(prefix.length) : undefined) };
}

function refuse(actionId: string, why: string): never {
  throw new CarError("unauthorized", `action '${actionId}' ${why}: proposals run without a tenant and cannot reach tenant-scoped keys`, {
    action_id: actionId,
  });
}

/** Refuses a proposal that names a tenant key anywhere, or computes a state key at run time. */
export function checkProposalTenancy(proposal: ActionProposal): void {
  for (const action of proposal.actions) {
    const keys = [...effectiveReadSet(action), ...effectiveWriteSet(action), ...action.preconditions.map((p) => p.key)];
    for (const key of keys) if (key.startsWith(TENANT_PREFIX)) refuse(action.id, `names the tenant key '${key}'`);
    if (action.type !== "state_write" && action.type !== "state_read") continue;
    const key = getOwn(action.parameters, "key");
    const list = getOwn(action.parameters, "keys");
    const named = [key, ...(Array.isArray(list) ? list : [])];
    for (const k of named) {
      if (typeof k === "string" && (k.startsWith(TENANT_PREFIX) || parseOutputRef(k) !== undefined)) {
        refuse(action.id, k.startsWith(TENANT_PREFIX) ? `names the tenant key '${k}'` : `computes its state key at run time ('${k}')`);
      }
    }
  }
}
