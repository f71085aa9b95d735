/**
 * Finding a skill for the work at hand: relevance to the query times the
 * skill's track record.
 *
 * relevance = 2 × (domain equals the query's, ignoring case)
 *           + the share of the skill's task keywords found in the query's task
 *           + 0.5 × (persona equals) + 0.5 × (the URL matches the skill's url_pattern)
 * track     = (successes + 1) / (successes + failures + 2), so an untried skill
 *             scores 0.5 and a degraded one sinks without disappearing
 * Skills with no relevance are left out (an empty query finds every skill,
 * by track record). Ties go to the name that sorts first.
 */
import { CarError } from "@car/ir";
import { wordsOf } from "./distill.ts";
import type { SkillStore } from "./skill-store.ts";
import { isLive } from "./lifecycle.ts";
import type { SkillMatch, SkillQuery, SkillRecord } from "./types.ts";

export function findSkill(store: SkillStore, query: SkillQuery, maxResults = 1): SkillMatch[] {
  if (!Number.isInteger(maxResults) || maxResults < 1) throw new CarError("invalid_params", `maxResults must be a positive integer, got ${String(maxResults)}`);
  const empty = !query.domain && !query.task && !query.persona && !query.url;
  const taskWords = new Set(wordsOf(query.task ?? ""));
  const matches: SkillMatch[] = [];
  for (const skill of store.list()) {
    if (!isLive(skill)) continue;
    const relevance = empty ? 1 : relevanceOf(skill, query, taskWords);
    if (relevance === 0) continue;
    matches.push({ ...skill, platform: skill.domain, match_score: relevance * track(skill) });
  }
  matches.sort((a, b) => b.match_score - a.match_score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return matches.slice(0, maxResults);
}

function relevanceOf(skill: SkillRecord, query: SkillQuery, taskWords: ReadonlySet<string>): number {
  let score = 0;
  if (query.domain && skill.domain.toLowerCase() === query.domain.toLowerCase()) score += 2;
  const keywords = skill.trigger.task_keywords.map((k) => k.toLowerCase());
  if (taskWords.size > 0 && keywords.length > 0) {
    const task = (query.task ?? "").toLowerCase();
    // A keyword matches as a word of the task, or as a phrase inside it ("tl;dr", "deploy staging").
    const hits = keywords.filter((k) => taskWords.has(k) || task.includes(k)).length;
    score += hits / keywords.length;
  }
  if (query.persona && skill.trigger.persona !== "" && skill.trigger.persona === query.persona) score += 0.5;
  if (query.url && skill.trigger.url_pattern !== "" && globMatches(skill.trigger.url_pattern, query.url)) score += 0.5;
  return score;
}

function track(skill: SkillRecord): number {
  const { success_count: s, fail_count: f } = skill.stats;
  return (s + 1) / (s + f + 2);
}

/** `*` matches any run of characters; everything else is literal. */
function globMatches(pattern: string, text: string): boolean {
  const source = pattern
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${source}$`).test(text);
}
