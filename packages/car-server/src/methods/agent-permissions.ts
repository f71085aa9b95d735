/**
 * `agent_permissions.*`: per-agent postures (`always_allow`,
 * `require_approval`, `deny`) per permission tier, kept in the server's
 * database so they survive restarts and apply to every session acting for
 * that agent (a connection opened with `?agent_id=`). Every mutation answers
 * with the whole policy, as the reference does.
 */
import { emptyMap, getOwn, type JsonObject, type JsonValue, setOwn } from "@car/ir";
import { isPermissionTier, type PermissionTier, PERMISSION_TIERS, type Posture } from "@car/policy";
import { type MethodContext, type MethodTable, agentMethod, operatorMethod } from "../method.ts";
import { invalidParams, optionalString, paramsObject, requireString } from "../params.ts";
import { requireStore, type ServeStore } from "../serve-store.ts";

const POSTURES: readonly Posture[] = ["always_allow", "require_approval", "deny"];

/**
 * What an agent without an override gets: the tier gate at the session's
 * default `sandbox_edit` standing tier (reads and edits run, `full_access`
 * always asks a human). Fixed, so there is no `set_default`.
 */
const DEFAULT_POSTURE: Readonly<Record<PermissionTier, Posture>> = {
  read_only: "always_allow",
  sandbox_edit: "always_allow",
  full_access: "require_approval",
};

function readTier(p: JsonObject, required: boolean): PermissionTier | null {
  const tier = required ? requireString(p, "tier") : optionalString(p, "tier");
  if (tier === undefined) return null;
  if (!isPermissionTier(tier)) throw invalidParams(`tier must be one of ${PERMISSION_TIERS.join(", ")}, got '${tier}'`);
  return tier;
}

function readMode(p: JsonObject): Posture {
  const mode = requireString(p, "mode");
  if (!(POSTURES as readonly string[]).includes(mode)) throw invalidParams(`mode must be one of ${POSTURES.join(", ")}, got '${mode}'`);
  return mode as Posture;
}

/** `{ default, agents }`: an all-tier entry fills every tier of its agent, a per-tier entry wins over it. */
async function policyOf(store: ServeStore): Promise<JsonValue> {
  const entries = await store.postures.list();
  const agents = emptyMap<JsonObject>();
  const ordered = [...entries.filter((e) => e.tier === null), ...entries.filter((e) => e.tier !== null)];
  for (const entry of ordered) {
    let agent = getOwn(agents, entry.agent_id);
    if (agent === undefined) setOwn(agents, entry.agent_id, (agent = emptyMap()));
    for (const tier of entry.tier === null ? PERMISSION_TIERS : [entry.tier]) setOwn(agent, tier, entry.posture);
  }
  return { default: { ...DEFAULT_POSTURE }, agents };
}

function storeOf(ctx: MethodContext, method: string): ServeStore {
  return requireStore(ctx.session.options.store, method);
}

async function get(_params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  return policyOf(storeOf(ctx, "agent_permissions.get"));
}

async function set(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const store = storeOf(ctx, "agent_permissions.set");
  const p = paramsObject(params);
  const agentId = requireString(p, "agent_id");
  const mode = readMode(p);
  const tier = readTier(p, false);
  // Every tier: the agent's per-tier entries would otherwise still win over the new all-tier one.
  if (tier === null) await store.postures.clear(agentId, null);
  await store.postures.set(agentId, mode, tier, Date.now());
  return policyOf(store);
}

async function reset(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const store = storeOf(ctx, "agent_permissions.reset");
  await store.postures.clear(requireString(paramsObject(params), "agent_id"), null);
  return policyOf(store);
}

async function evaluate(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const store = storeOf(ctx, "agent_permissions.evaluate");
  const p = paramsObject(params);
  const agentId = requireString(p, "agent_id");
  const tier = readTier(p, true) as PermissionTier;
  const override = await store.postures.resolve(agentId, tier);
  return { agent_id: agentId, tier, mode: override ?? DEFAULT_POSTURE[tier], has_override: override !== undefined };
}

export const agentPermissionMethods: MethodTable = {
  "agent_permissions.get": agentMethod(get),
  "agent_permissions.set": operatorMethod(set),
  "agent_permissions.reset": operatorMethod(reset),
  "agent_permissions.evaluate": agentMethod(evaluate),
};
