/**
 * The default posture (`agent_permissions.set_default`): what every agent
 * without an override of its own gets, per tier. Kept in the postures table
 * of the server's database under a key no agent can have (agent ids with a
 * control character are refused), so it survives restarts and is shared by
 * every server on the database. Until an operator sets one, the tier gate
 * alone decides (reads and edits run, `full_access` asks: `trusting`).
 */
import type { Action } from "@car/ir";
import type { PostureStore } from "@car/engine";
import type { PermissionTier, Posture } from "@car/policy";

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
