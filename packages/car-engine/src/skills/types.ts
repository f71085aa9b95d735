/**
 * The skills loop's records, snake_case as on the wire. A DistilledSkill is
 * a candidate procedure (from `distillSkills`, an improver, or written by
 * hand); a SkillRecord is one stored version of it with its track record
 * and lineage.
 */
import type { JsonObject } from "@car/ir";
import type { PermissionTier } from "@car/policy";

/** When a skill applies. */
export interface SkillTrigger {
  persona: string;
  /** A glob (`*` matches anything) over URLs; "" when URLs do not matter. */
  url_pattern: string;
  task_keywords: string[];
}

/** What a distilled skill was learned from. */
export interface SkillEvidence {
  /** How many times the tool sequence succeeded. */
  occurrences: number;
  /** The episodes (tasks or runs) it succeeded in, in first-seen order. */
  episodes: string[];
  /** The trace events' action ids, in trace order. */
  action_ids: string[];
  mean_reward: number;
  /** The tool sequence. */
  tools: string[];
}

export interface DistilledSkill {
  name: string;
  description: string;
  when_to_apply: string;
  domain: string;
  /** What an agent runs: a tool sequence, a command, a prompt — the runtime does not interpret it. */
  code: string;
  trigger: SkillTrigger;
  /** Where it came from, e.g. `success` (distilled from successes), `evolved`, `manual`. */
  source: string;
  scope: JsonObject;
  evidence?: SkillEvidence;
  /**
   * The most authority actions driven by this skill may have: a permission
   * evaluation that names the skill runs at `min(granted, deployment_tier)`.
   * Absent: the skill caps nothing.
   */
  deployment_tier?: PermissionTier;
}

/** A skill as ingest and the evolver accept it: `name` and `code` required, the rest defaulted (see skill-input.ts). */
export type DistilledSkillInput = Pick<DistilledSkill, "name" | "code"> &
  Partial<Omit<DistilledSkill, "name" | "code" | "trigger">> & { trigger?: Partial<SkillTrigger> };

export interface SkillStats {
  success_count: number;
  fail_count: number;
  /** RFC 3339; null before the first outcome. */
  last_outcome_at: string | null;
}

export interface SkillRef {
  name: string;
  version: number;
}

/** How a version came to be. */
export type SkillChange = "ingested" | "evolved" | "repaired" | "promoted" | "imported" | "trial";

/**
 * Where a version stands. `active` (also a record without `status`): in
 * use. `provisional`: a candidate on trial (`<base>@cand`), not yet trusted.
 * `rejected`: a candidate that did not beat its incumbent (the rejected-edit
 * buffer). `promoted`: a candidate whose content became its incumbent's.
 */
export type SkillStatus = "active" | "provisional" | "rejected" | "promoted";

export interface SkillRecord extends DistilledSkill {
  /** 1 for a new name; each later version of the same name adds one. */
  version: number;
  change: SkillChange;
  /** The versions this one replaces or was derived from (its lineage). */
  derived_from: SkillRef[];
  /** RFC 3339. */
  created_at: string;
  stats: SkillStats;
  /** Set when `fail_count > success_count + 2`; stays set until a repair records a new version. */
  broken_for_repair: boolean;
  /** Absent on active skills written before the lifecycle existed: read as `active`. */
  status?: SkillStatus;
  /** A candidate's incumbent: the base name it trials to replace. */
  incumbent?: string;
}

/** What `findSkill` matches against; every field is optional. */
export interface SkillQuery {
  domain?: string;
  task?: string;
  persona?: string;
  url?: string;
}

export interface SkillMatch extends SkillRecord {
  /** The reference's name for the skill's domain (`skill.find` returns it). */
  platform: string;
  /** Relevance to the query times the track record; higher is better. */
  match_score: number;
}
