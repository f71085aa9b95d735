/**
 * The default posture (`agent_permissions.set_default`): what every agent
 * without an override of its own gets, per tier. Kept in the postures table
 * of the server's database under a key no agent can have (agent ids with a
 * control character are refused), so it survives restarts and is shared by
 * every server on the database. Until an operator sets one, the tier gate
 * alone decides (reads and edits run, `full_access` asks: `trusting`).
 */
import { type Action, emptyMap, getOwn, type JsonObject, setOwn } from "@car/ir";
import type { PostureStore } from "@car/engine";
import { type PermissionTier, PERMISSION_TIERS, type Posture } from "@car/policy";

/** The postures-table key of the default posture: a unit separator cannot be in an agent id. */
export const DEFAULT_POSTURE_KEY = "\u001fdefault";

/** Whether `id` could collide with a reserved key: an agent id must not hold a control character. */
export function isReservedAgentId(id: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to refuse them
  return /[\u0000-\u001f\u007f]/.test(id);
}

export const PRESETS = {
  /** Reads run; edits ask; consequential actions are refused. */
  cautious: { read_only: "always_allow", sandbox_edit: "require_approval", full_access: "deny" },
  /** The reference's default: reads run, edits and consequential actions ask. */
  balanced: { read_only: "always_allow", sandbox_edit: "require_approval", full_access: "require_approval" },
  /** Reads and edits run, consequential actions ask: the tier gate at `sandbox_edit`, as when nothing is set. */
  trusting: { read_only: "always_allow", sandbox_edit: "always_allow", full_access: "require_approval" },
} as const satisfies Record<string, Record<PermissionTier, Posture>>;

export type PresetName = keyof typeof PRESETS;

/** What an agent without an override gets when no default is set. */
export const UNSET_DEFAULT: Readonly<Record<PermissionTier, Posture>> = PRESETS.trusting;

/** The postures-table key of an exact (agent, tool) override. */
export function toolOverrideKey(agentId: string, tool: string): string {
  return `${agentId}\u001ftool\u001f${tool}`;
}

/** The (agent, tool) pair of a tool-override key, or undefined for any other key. */
export function parseToolOverrideKey(key: string): { agent_id: string; tool: string } | undefined {
  const parts = key.split("\u001f");
  return parts.length === 3 && parts[1] === "tool" ? { agent_id: parts[0]!, tool: parts[2]! } : undefined;
}

/**
 * The agent's posture for an action at `tier`: the exact (agent, tool)
 * override, else its own tier entry, else the default's, else undefined
 * (the tier gate decides). Literal identifiers only: no wildcard, prefix or
 * pattern.
 */
export function postureWithDefault(postures: Pick<PostureStore, "resolve">, agentId: string) {
  return async (tier: PermissionTier, action: Action): Promise<Posture | undefined> =>
    (action.tool !== undefined ? await postures.resolve(toolOverrideKey(agentId, action.tool), tier) : undefined) ??
    (await postures.resolve(agentId, tier)) ??
    (await postures.resolve(DEFAULT_POSTURE_KEY, tier));
}

/** The default posture as stored, tier by tier, over what applies when none is set. */
export async function defaultPosture(postures: Pick<PostureStore, "resolve">): Promise<Record<PermissionTier, Posture>> {
  const out: Record<PermissionTier, Posture> = { ...UNSET_DEFAULT };
  for (const tier of PERMISSION_TIERS) {
    const stored = await postures.resolve(DEFAULT_POSTURE_KEY, tier);
    if (stored !== undefined) out[tier] = stored;
  }
  return out;
}

/** Sets every tier of the default posture to `preset`'s. */
export async function setDefaultPreset(postures: Pick<PostureStore, "set" | "clear">, preset: PresetName, now: number): Promise<void> {
  await postures.clear(DEFAULT_POSTURE_KEY, null);
  for (const tier of PERMISSION_TIERS) await postures.set(DEFAULT_POSTURE_KEY, PRESETS[preset][tier], tier, now);
}

/**
 * The whole policy as `agent_permissions.get` shows it: `{ default, agents,
 * tool_overrides? }`. An agent's all-tier entry fills every tier, a per-tier
 * entry wins over it; `tool_overrides` is left out when there is none.
 */
export async function posturePolicy(postures: Pick<PostureStore, "resolve" | "list">): Promise<JsonObject> {
  const entries = await postures.list();
  const agents = emptyMap<JsonObject>();
  const toolOverrides = emptyMap<JsonObject>();
  for (const entry of entries) {
    const pair = parseToolOverrideKey(entry.agent_id);
    if (pair === undefined) continue;
    let agent = getOwn(toolOverrides, pair.agent_id);
    if (agent === undefined) setOwn(toolOverrides, pair.agent_id, (agent = emptyMap()));
    setOwn(agent, pair.tool, { mode: entry.posture });
  }
  const ordered = [...entries.filter((e) => e.tier === null), ...entries.filter((e) => e.tier !== null)];
  for (const entry of ordered) {
    if (isReservedAgentId(entry.agent_id)) continue;
    let agent = getOwn(agents, entry.agent_id);
    if (agent === undefined) setOwn(agents, entry.agent_id, (agent = emptyMap()));
    for (const tier of entry.tier === null ? PERMISSION_TIERS : [entry.tier]) setOwn(agent, tier, entry.posture);
  }
  return { default: await defaultPosture(postures), agents, ...(Object.keys(toolOverrides).length > 0 ? { tool_overrides: toolOverrides } : {}) };
}

/** Whether `name` is a preset. */
export function isPreset(name: string): name is PresetName {
  return Object.hasOwn(PRESETS, name);
}
