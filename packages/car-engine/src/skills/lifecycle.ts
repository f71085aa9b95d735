/**
 * Validation-gated skills: a candidate edit enters on trial as
 * `<base>@cand` (status `provisional`) beside its incumbent `<base>`, earns
 * outcomes like any skill (`reportOutcome` on its key), and the promotion
 * gate decides it once it has `minTrialSamples` outcomes: promoted when the
 * Wilson lower bound of its success rate strictly beats the incumbent's
 * (its content becomes the incumbent's next version), else rejected — kept
 * in the candidate's history as the rejected-edit buffer, so the same edit
 * is not put on trial again.
 */
import { CarError } from "@car/ir";
import { recordVersion, refOf, sameContent } from "./record-version.ts";
import type { SkillOptions } from "./record-version.ts";
import { parseDistilledSkill } from "./skill-input.ts";
import type { SkillStore } from "./skill-store.ts";
import type { DistilledSkillInput, SkillChange, SkillRecord, SkillRef, SkillStats, SkillStatus } from "./types.ts";

export const CANDIDATE_SUFFIX = "@cand";
export const DEFAULT_MIN_TRIAL_SAMPLES = 5;
/** z for a 95% one-sided-ish Wilson interval, the usual choice. */
const WILSON_Z = 1.96;

export function statusOf(record: SkillRecord): SkillStatus {
  return record.status ?? "active";
}

/** A record still in play: active, or a candidate on trial. */
export function isLive(record: SkillRecord): boolean {
  const status = statusOf(record);
  return status === "active" || status === "provisional";
}

/**
 * Puts candidates on trial; returns how many entered. A candidate already
 * on trial, one whose edit was rejected before, or one identical to its
 * incumbent is dropped from the count (and not stored). Every candidate is
 * checked before any is stored.
 */
export function ingestProvisionalSkills(store: SkillStore, skills: readonly DistilledSkillInput[], options: SkillOptions = {}): number {
  if (!Array.isArray(skills)) throw new CarError("invalid_params", "skills must be an array");
  const parsed = skills.map((s, i) => parseDistilledSkill(s, `/${i}`, "invalid_params"));
  for (const [i, s] of parsed.entries()) {
    if (s.name.endsWith(CANDIDATE_SUFFIX))
      throw new CarError("invalid_params", `/${i}/name: name the incumbent ('${s.name.slice(0, -CANDIDATE_SUFFIX.length)}'), not its candidate key`);
  }
  let entered = 0;
  for (const skill of parsed) {
    const key = `${skill.name}${CANDIDATE_SUFFIX}`;
    const trial = store.get(key);
    if (trial !== undefined && statusOf(trial) === "provisional") continue;
    if (store.history(key).some((r) => statusOf(r) === "rejected" && sameContent(r, skill))) continue;
    const incumbent = store.get(skill.name);
    if (incumbent !== undefined && sameContent(incumbent, skill)) continue;
    const derived: SkillRef[] = incumbent === undefined ? [] : [refOf(incumbent)];
    recordVersion(store, { ...skill, name: key }, "trial", derived, options, { status: "provisional", incumbent: skill.name });
    entered++;
  }
  return entered;
}

export interface GateOptions extends SkillOptions {
  /** Outcomes a candidate needs before the gate decides it (default 5). */
  minTrialSamples?: number;
}

export interface GateResult {
  /** Candidate keys promoted, in key order. */
  promoted: string[];
  rejected: string[];
}

/** The lower bound of the Wilson score interval of `successes` out of `n` (0 when n is 0). */
export function wilsonLowerBound(successes: number, n: number, z: number = WILSON_Z): number {
  if (n === 0) return 0;
  const p = successes / n;
  const z2 = z * z;
  const bound = (p + z2 / (2 * n) - z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
  // With no successes the formula is 0 up to rounding, which can land just below it.
  return Math.max(0, bound);
}

function lowerBound(stats: SkillStats): number {
  return wilsonLowerBound(stats.success_count, stats.success_count + stats.fail_count);
}

/** Decides every candidate with enough trial outcomes. */
export function runPromotionGate(store: SkillStore, options: GateOptions = {}): GateResult {
  const min = options.minTrialSamples ?? DEFAULT_MIN_TRIAL_SAMPLES;
  if (!Number.isInteger(min) || min < 1) throw new CarError("invalid_params", `minTrialSamples must be a positive integer, got ${String(min)}`);
  const result: GateResult = { promoted: [], rejected: [] };
  for (const candidate of store.list()) {
    if (statusOf(candidate) !== "provisional" || candidate.incumbent === undefined) continue;
    const { success_count, fail_count } = candidate.stats;
    if (success_count + fail_count < min) continue;
    const incumbent = store.get(candidate.incumbent);
    const bar = incumbent !== undefined && statusOf(incumbent) === "active" ? lowerBound(incumbent.stats) : 0;
    if (lowerBound(candidate.stats) > bar) {
      const derived = [refOf(candidate), ...(incumbent === undefined ? [] : [refOf(incumbent)])];
      recordVersion(store, { ...candidate, name: candidate.incumbent }, "promoted", derived, options);
      store.put({ ...candidate, status: "promoted" });
      result.promoted.push(candidate.name);
    } else {
      store.put({ ...candidate, status: "rejected" });
      result.rejected.push(candidate.name);
    }
  }
  return result;
}

/** What `skill.meta` returns: a skill's lifecycle and track record, without its code. */
export interface SkillMeta {
  key: string;
  status: SkillStatus;
  /** The base name a candidate trials to replace; null for an active skill. */
  incumbent: string | null;
  version: number;
  change: SkillChange;
  derived_from: SkillRef[];
  /** The reference's name for the domain. */
  platform: string;
  domain: string;
  description: string;
  stats: SkillStats;
  success_rate: number | null;
  broken_for_repair: boolean;
  created_at: string;
}

/** The meta of the skill or candidate held under `key`; null when none is active or on trial there. */
export function skillMeta(store: SkillStore, key: string): SkillMeta | null {
  if (typeof key !== "string" || key === "") throw new CarError("invalid_params", "key must be a non-empty string");
  const record = store.get(key);
  if (record === undefined || !isLive(record)) return null;
  const { success_count: s, fail_count: f } = record.stats;
  return {
    key,
    status: statusOf(record),
    incumbent: record.incumbent ?? null,
    version: record.version,
    change: record.change,
    derived_from: record.derived_from,
    platform: record.domain,
    domain: record.domain,
    description: record.description,
    stats: record.stats,
    success_rate: s + f === 0 ? null : s / (s + f),
    broken_for_repair: record.broken_for_repair,
    created_at: record.created_at,
  };
}
