/**
 * Permission tiers answer "who may authorize this": `read_only` < `sandbox_edit`
 * < `full_access`. A separate axis from reversibility ("can this be undone").
 */
export type PermissionTier = "read_only" | "sandbox_edit" | "full_access";

export const PERMISSION_TIERS: readonly PermissionTier[] = ["read_only", "sandbox_edit", "full_access"];

export function tierRank(tier: PermissionTier): number {
  return PERMISSION_TIERS.indexOf(tier);
}

/** The higher of two tiers. */
export function maxTier(a: PermissionTier, b: PermissionTier): PermissionTier {
  return tierRank(a) >= tierRank(b) ? a : b;
}

export function isPermissionTier(value: unknown): value is PermissionTier {
  return typeof value === "string" && (PERMISSION_TIERS as readonly string[]).includes(value);
}
