/**
 * Track records: every use of a skill is reported as a success or a
 * failure. A skill is degraded (`broken_for_repair`) once its failures
 * outnumber its successes by more than two, and stays so until repaired;
 * domains whose skills mostly fail are the ones to evolve.
 */
import { CarError, rfc3339, systemClock } from "@car/ir";
import type { SkillOptions } from "./record-version.ts";
import type { SkillStore } from "./skill-store.ts";
import type { SkillRecord, SkillStats } from "./types.ts";

export const DEFAULT_EVOLUTION_THRESHOLD = 0.6;

/** The degradation rule: `fail_count > success_count + 2`. */
export function shouldDegrade(stats: SkillStats): boolean {
  return stats.fail_count > stats.success_count + 2;
}

/** Successes over reported outcomes; null before the first outcome. */
export function successRate(stats: SkillStats): number | null {
  const total = stats.success_count + stats.fail_count;
  return total === 0 ? null : stats.success_count / total;
}

export interface OutcomeReport {
  name: string;
  version: number;
  stats: SkillStats;
  success_rate: number;
  broken_for_repair: boolean;
  /** True when this very report degraded the skill. */
  degraded_now: boolean;
}

/** `true` / `"success"` is a success; `false` / `"fail"` / `"failure"` a failure; anything else is refused. */
export type SkillOutcome = boolean | "success" | "fail" | "failure";

/** Records one use of the latest version of `name`. */
export function reportOutcome(store: SkillStore, name: string, outcome: SkillOutcome, options: SkillOptions = {}): OutcomeReport {
  const success = outcome === true || outcome === "success";
  if (!success && outcome !== false && outcome !== "fail" && outcome !== "failure") {
    throw new CarError("invalid_params", `outcome must be true, false, "success" or "fail", got ${JSON.stringify(outcome)}`);
  }
  const skill = store.get(name);
  if (skill === undefined) throw new CarError("not_found", `no skill named '${name}'`);
  const stats: SkillStats = {
    success_count: skill.stats.success_count + (success ? 1 : 0),
    fail_count: skill.stats.fail_count + (success ? 0 : 1),
    last_outcome_at: rfc3339((options.clock ?? systemClock).now()),
  };
  const degraded_now = !skill.broken_for_repair && shouldDegrade(stats);
  const updated: SkillRecord = { ...skill, stats, broken_for_repair: skill.broken_for_repair || degraded_now };
  store.put(updated);
  return { name, version: skill.version, stats, success_rate: successRate(stats)!, broken_for_repair: updated.broken_for_repair, degraded_now };
}

/**
 * Domains that need better skills: the pooled success rate of their skills
 * (latest versions with at least one outcome) is below `threshold`, or one
 * of their skills is degraded. Worst first; equal rates by name.
 */
export function domainsNeedingEvolution(store: SkillStore, threshold: number = DEFAULT_EVOLUTION_THRESHOLD): string[] {
  if (typeof threshold !== "number" || !(threshold >= 0 && threshold <= 1))
    throw new CarError("invalid_params", `threshold must be between 0 and 1, got ${String(threshold)}`);
  const domains = new Map<string, { successes: number; total: number; broken: boolean }>();
  for (const skill of store.list()) {
    const d = domains.get(skill.domain) ?? { successes: 0, total: 0, broken: false };
    d.successes += skill.stats.success_count;
    d.total += skill.stats.success_count + skill.stats.fail_count;
    d.broken ||= skill.broken_for_repair;
    domains.set(skill.domain, d);
  }
  const weak: { domain: string; rate: number }[] = [];
  for (const [domain, d] of domains) {
    if (d.total === 0) continue;
    const rate = d.successes / d.total;
    if (rate < threshold || d.broken) weak.push({ domain, rate });
  }
  return weak.sort((a, b) => a.rate - b.rate || (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0)).map((w) => w.domain);
}
