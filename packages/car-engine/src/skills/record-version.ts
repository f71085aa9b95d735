/**
 * Writing a new version of a skill: numbered after the latest one, with a
 * fresh track record (a changed procedure earns its own), and its lineage.
 */
import { rfc3339, systemClock } from "@car/ir";
import type { Clock } from "@car/ir";
import type { SkillStore } from "./skill-store.ts";
import type { DistilledSkill, SkillChange, SkillRecord, SkillRef } from "./types.ts";

/** The lifecycle fields a new version may carry (none: an active skill). */
export type Lifecycle = Pick<SkillRecord, "status" | "incumbent">;

export interface SkillOptions {
  /** Timestamps for `created_at` and `last_outcome_at`. */
  clock?: Clock;
}

export function refOf(record: SkillRecord): SkillRef {
  return { name: record.name, version: record.version };
}

/** Stores `skill` as the next version of its name and returns the stored record. */
export function recordVersion(
  store: SkillStore,
  skill: DistilledSkill,
  change: SkillChange,
  derived_from: SkillRef[],
  options: SkillOptions,
  lifecycle: Lifecycle = {},
): SkillRecord {
  const latest = store.get(skill.name);
  const record: SkillRecord = {
    ...contentOf(skill),
    ...lifecycle,
    version: (latest?.version ?? 0) + 1,
    change,
    derived_from,
    created_at: rfc3339((options.clock ?? systemClock).now()),
    stats: { success_count: 0, fail_count: 0, last_outcome_at: null },
    broken_for_repair: false,
  };
  store.put(record);
  return record;
}

/** A skill's content without any record's bookkeeping (version, stats, lifecycle). */
export function contentOf(skill: DistilledSkill): DistilledSkill {
  const content: DistilledSkill = {
    name: skill.name,
    description: skill.description,
    when_to_apply: skill.when_to_apply,
    domain: skill.domain,
    code: skill.code,
    trigger: skill.trigger,
    source: skill.source,
    scope: skill.scope,
  };
  if (skill.evidence !== undefined) content.evidence = skill.evidence;
  if (skill.deployment_tier !== undefined) content.deployment_tier = skill.deployment_tier;
  return content;
}

/** True when the skill's content (not its bookkeeping) equals `skill`'s. */
export function sameContent(record: SkillRecord, skill: DistilledSkill): boolean {
  const content = (s: DistilledSkill): string =>
    JSON.stringify([
      s.description,
      s.when_to_apply,
      s.domain,
      s.code,
      s.trigger.persona,
      s.trigger.url_pattern,
      s.trigger.task_keywords,
      s.source,
      s.deployment_tier ?? null,
    ]);
  return content(record) === content(skill);
}
