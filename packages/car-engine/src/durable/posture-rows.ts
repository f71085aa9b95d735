/**
 * How both durable backends store a posture: a posture for every tier sits
 * under the tier `*`, so one row per (agent, tier) covers both kinds.
 */
import type { PermissionTier, Posture } from "@car/policy";
import type { PostureEntry } from "./durable-store.ts";

/** The stored tier that stands for every tier. */
export const ALL_TIERS = "*";

/** A postures row, in JavaScript numbers (each driver converts its own integer types first). */
export interface PostureRow {
  agent_id: string;
  tier: string;
  posture: Posture;
  updated_at: number;
}

export function postureEntryOf(row: PostureRow): PostureEntry {
  return { agent_id: row.agent_id, tier: row.tier === ALL_TIERS ? null : (row.tier as PermissionTier), posture: row.posture, updated_at: row.updated_at };
}
