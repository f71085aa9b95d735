/**
 * Ingest: candidate skills into the store. Every candidate is checked before
 * any is stored, so a malformed batch stores nothing. A name already in the
 * store gets a new version derived from the old one; a candidate identical
 * to the latest version is not stored again, so re-ingesting is harmless.
 */
import { CarError } from "@car/ir";
import { recordVersion, refOf, sameContent } from "./record-version.ts";
import type { SkillOptions } from "./record-version.ts";
import { parseDistilledSkill } from "./skill-input.ts";
import type { SkillStore } from "./skill-store.ts";
import type { DistilledSkillInput } from "./types.ts";

/** Stores the candidates; returns how many new versions were recorded. */
export function ingestDistilledSkills(store: SkillStore, skills: readonly DistilledSkillInput[], options: SkillOptions = {}): number {
  if (!Array.isArray(skills)) throw new CarError("invalid_params", "skills must be an array");
  const parsed = skills.map((s, i) => parseDistilledSkill(s, `/${i}`, "invalid_params"));
  let stored = 0;
  for (const skill of parsed) {
    const latest = store.get(skill.name);
    if (latest !== undefined && sameContent(latest, skill)) continue;
    recordVersion(store, skill, "ingested", latest === undefined ? [] : [refOf(latest)], options);
    stored++;
  }
  return stored;
}
