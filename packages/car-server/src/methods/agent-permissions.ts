/**
 * `agent_permissions.*`: per-agent postures (`always_allow`,
 * `require_approval`, `deny`) per permission tier, kept in the server's
 * database so they survive restarts and apply to every session acting for
 * that agent (a connection opened with `?agent_id=`), and the default
 * posture for agents without an override (`set_default`: a preset or one
 * tier). Every mutation answers with the whole policy, as the reference does.
 */
import type { JsonObject, JsonValue } from "@car/ir";
import { isPermissionTier, type PermissionTier, PERMISSION_TIERS, type Posture } from "@car/policy";
import { type MethodContext, type MethodTable, agentMethod, operatorMethod } from "../method.ts";
import { invalidParams, optionalString, paramsObject, requireString } from "../params.ts";
import { requireStore, type ServeStore } from "../serve-store.ts";
import {
  DEFAULT_POSTURE_KEY,
  defaultPosture,
  isReservedAgentId,
  posturePolicy,
  PRESETS,
  type PresetName,
  setDefaultPreset,
  toolOverrideKey,
} from "../postures/default-posture.ts";
import { TOOL_OVERRIDES_CAPABILITY } from "./handshake.ts";

const POSTURES: readonly Posture[] = ["always_allow", "require_approval", "deny"];

function readAgentId(p: JsonObject): string {
  const id = requireString(p, "agent_id");
  if (id === "" || isReservedAgentId(id)) throw invalidParams("agent_id must be non-empty and hold no control character");
  return id;
}

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

/** The whole policy, as every mutation answers. */
function policyOf(store: ServeStore): Promise<JsonValue> {
  return posturePolicy(store.postures);
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
  const agentId = readAgentId(p);
  const mode = readMode(p);
  const tier = readTier(p, false);
  // Every tier: the agent's per-tier entries would otherwise still win over the new all-tier one.
  if (tier === null) await store.postures.clear(agentId, null);
  await store.postures.set(agentId, mode, tier, Date.now());
  return policyOf(store);
}

async function reset(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const store = storeOf(ctx, "agent_permissions.reset");
  await store.postures.clear(readAgentId(paramsObject(params)), null);
  return policyOf(store);
}

async function evaluate(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const store = storeOf(ctx, "agent_permissions.evaluate");
  const p = paramsObject(params);
  const agentId = readAgentId(p);
  const tier = readTier(p, true) as PermissionTier;
  const override = await store.postures.resolve(agentId, tier);
  return { agent_id: agentId, tier, mode: override ?? (await defaultPosture(store.postures))[tier], has_override: override !== undefined };
}

/**
 * `agent_permissions.set_default`: `{ preset: cautious | balanced | trusting }`
 * sets every tier of the default posture, `{ tier, mode }` one tier. Agents
 * with an override of their own keep it.
 */
async function setDefault(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const store = storeOf(ctx, "agent_permissions.set_default");
  const p = paramsObject(params);
  const preset = optionalString(p, "preset");
  if (preset !== undefined) {
    if (p["tier"] !== undefined || p["mode"] !== undefined) throw invalidParams("give preset, or tier and mode, not both");
    if (!Object.hasOwn(PRESETS, preset)) throw invalidParams(`preset must be one of ${Object.keys(PRESETS).join(", ")}, got '${preset.slice(0, 40)}'`);
    await setDefaultPreset(store.postures, preset as PresetName, Date.now());
    return policyOf(store);
  }
  const tier = readTier(p, true) as PermissionTier;
  await store.postures.set(DEFAULT_POSTURE_KEY, readMode(p), tier, Date.now());
  return policyOf(store);
}

function readTool(p: JsonObject): string {
  const tool = requireString(p, "tool");
  if (tool === "" || isReservedAgentId(tool)) throw invalidParams("tool must be non-empty and hold no control character");
  return tool;
}

/**
 * `agent_permissions.set_tool`: one exact (agent, tool) override, for every
 * tier. `deny` and `require_approval` only tighten. An exact `always_allow`
 * is refused: the reference binds it to the schema a live agent session
 * registered, which this server does not track, and a grant it cannot bind
 * it does not record (DECISIONS §25).
 */
async function setTool(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const store = storeOf(ctx, "agent_permissions.set_tool");
  const p = paramsObject(params);
  if (p["schema_digest"] !== undefined) throw invalidParams("schema_digest is recorded by the server, never supplied by the caller");
  const key = toolOverrideKey(readAgentId(p), readTool(p));
  const mode = readMode(p);
  if (mode === "always_allow") {
    throw invalidParams(
      "an exact always_allow tool override is not offered: it must be bound to a live agent's registered schema; use deny or require_approval",
    );
  }
  await store.postures.set(key, mode, null, Date.now());
  return policyOf(store);
}

async function resetTool(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const store = storeOf(ctx, "agent_permissions.reset_tool");
  const p = paramsObject(params);
  await store.postures.clear(toolOverrideKey(readAgentId(p), readTool(p)), null);
  return policyOf(store);
}

async function evaluateTool(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const store = storeOf(ctx, "agent_permissions.evaluate_tool");
  const p = paramsObject(params);
  const agentId = readAgentId(p);
  const tool = readTool(p);
  const tier = readTier(p, true) as PermissionTier;
  const exact = await store.postures.resolve(toolOverrideKey(agentId, tool), tier);
  const tierPosture = (await store.postures.resolve(agentId, tier)) ?? (await defaultPosture(store.postures))[tier];
  return {
    agent_id: agentId,
    tool,
    tier,
    mode: exact ?? tierPosture,
    has_tool_override: exact !== undefined,
    active: exact !== undefined,
    schema_bound: false,
    schema_digest_present: false,
    authorization_source: exact !== undefined ? "agent_tool_override" : "tier_posture",
  };
}

export const agentPermissionMethods: MethodTable = {
  "agent_permissions.get": agentMethod(get),
  "agent_permissions.set": operatorMethod(set),
  "agent_permissions.reset": operatorMethod(reset),
  "agent_permissions.set_default": operatorMethod(setDefault),
  "agent_permissions.set_tool": operatorMethod(setTool, { capability: TOOL_OVERRIDES_CAPABILITY }),
  "agent_permissions.reset_tool": operatorMethod(resetTool),
  "agent_permissions.evaluate_tool": operatorMethod(evaluateTool, { capability: TOOL_OVERRIDES_CAPABILITY }),
  "agent_permissions.evaluate": agentMethod(evaluate),
};
