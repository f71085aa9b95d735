/**
 * Track records: every use of a skill is reported as a success or a
 * failure. A skill is degraded (`broken_for_repair`) once its failures
 * outnumber its successes by more than two, and stays so until repaired;
 * domains whose skills mostly fail are the ones to evolve.
 */
import { CarError, rfc3339, systemClock } from "@car/ir";
import { statusOf } from "./lifecycle.ts";
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
  /** How the outcome was counted: only `"success"` (or `true`) is a success. */
  counted_as: "success" | "failure";
}

/**
 * As the reference allows: `"success"` or any other string (`"fail"`,
 * `"timeout"`, `"wrong_answer"`, …), which counts as a failure; or a
 * boolean. An empty string, or one that reads like a misspelled `success`
 * (`"Success"`, `"sucess"`), is refused rather than counted as a failure.
 */
export type SkillOutcome = boolean | string;

function countsAsSuccess(outcome: SkillOutcome): boolean {
  if (typeof outcome === "boolean") return outcome;
  if (typeof outcome !== "string" || outcome.trim() === "")
    throw new CarError("invalid_params", `outcome must be "success", another outcome string or a boolean, got ${JSON.stringify(outcome) ?? String(outcome)}`);
  if (outcome === "success") return true;
  if (nearSuccess(outcome))
    throw new CarError(
      "invalid_params",
      `outcome ${JSON.stringify(outcome)} looks like a misspelled "success"; send "success" or a failure outcome such as "fail"`,
    );
  return false;
}

/** Within two edits of `success`, ignoring case. */
function nearSuccess(outcome: string): boolean {
  const a = outcome.trim().toLowerCase();
  const b = "success";
  if (Math.abs(a.length - b.length) > 2) return false;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]! <= 2;
}

/** Records one use of the latest version of `name` (a skill, or a candidate on trial under its `@cand` key). */
export function reportOutcome(store: SkillStore, name: string, outcome: SkillOutcome, options: SkillOptions = {}): OutcomeReport {
  const success = countsAsSuccess(outcome);
  const skill = store.get(name);
  if (skill === undefined) throw new CarError("not_found", `no skill named '${name}'`);
  const status = statusOf(skill);
  if (status === "rejected" || status === "promoted") {
    throw new CarError(
      "invalid_params",
      `'${name}' is a ${status} candidate, no longer on trial${status === "promoted" ? `; report on '${skill.incumbent ?? ""}'` : ""}`,
    );
  }
  const stats: SkillStats = {
    success_count: skill.stats.success_count + (success ? 1 : 0),
    fail_count: skill.stats.fail_count + (success ? 0 : 1),
    last_outcome_at: rfc3339((options.clock ?? systemClock).now()),
  };
  const degraded_now = !skill.broken_for_repair && shouldDegrade(stats);
  const updated: SkillRecord = { ...skill, stats, broken_for_repair: skill.broken_for_repair || degraded_now };
  store.put(updated);
  return {
    name,
    version: skill.version,
    stats,
    success_rate: successRate(stats)!,
    broken_for_repair: updated.broken_for_repair,
    degraded_now,
    counted_as: success ? "success" : "failure",
  };
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
    // Candidates on trial and retired ones do not speak for their domain.
    if (statusOf(skill) !== "active") continue;
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
