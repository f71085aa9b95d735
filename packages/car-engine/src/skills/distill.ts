/**
 * Distillation: find the tool sequences that keep working and propose them
 * as skills. Deterministic and model-free — the evidence is counted, not
 * guessed; an improver callback can refine the candidates later.
 *
 * How the trace is read:
 * - an event's episode is `data.episode`, else `data.run_id`, else
 *   `data.task` (all events without any form one episode); its domain is
 *   `data.domain`, else `general`;
 * - within an episode and domain, consecutive `action_succeeded` events form
 *   a sequence of tools; an `action_failed` event ends the sequence and
 *   discards it (a procedure that failed part-way is no evidence);
 * - a sequence that occurs at least `minOccurrences` times (default 2) in a
 *   domain becomes a candidate, with its evidence.
 */
import { CarError, getOwn, parseTraceEvent } from "@car/ir";
import type { JsonObject, TraceEvent } from "@car/ir";
import type { DistilledSkill } from "./types.ts";

export const DEFAULT_MIN_OCCURRENCES = 2;
const MAX_KEYWORDS = 8;
/** Words too common to tell tasks apart. */
const STOP_WORDS = new Set([
  "the",
  "and",
  "for",
  "with",
  "this",
  "that",
  "these",
  "those",
  "from",
  "into",
  "onto",
  "about",
  "are",
  "was",
  "were",
  "has",
  "have",
  "its",
  "our",
  "your",
  "all",
  "any",
]);

export interface DistillOptions {
  /** How often a sequence must have succeeded to become a candidate (default 2). */
  minOccurrences?: number;
}

interface Step {
  event: TraceEvent;
  episode: string;
}

interface Group {
  domain: string;
  tools: string[];
  runs: Step[][];
}

export function distillSkills(events: readonly unknown[], options: DistillOptions = {}): DistilledSkill[] {
  if (!Array.isArray(events)) throw new CarError("invalid_params", "events must be an array of trace events");
  const minOccurrences = options.minOccurrences ?? DEFAULT_MIN_OCCURRENCES;
  if (!Number.isInteger(minOccurrences) || minOccurrences < 1)
    throw new CarError("invalid_params", `minOccurrences must be a positive integer, got ${String(minOccurrences)}`);
  const trace = events.map((e, i) => {
    try {
      return parseTraceEvent(e);
    } catch (error) {
      throw new CarError("invalid_params", `events[${i}]: ${(error as Error).message}`, (error as CarError).details);
    }
  });

  // Sequences still open, per episode and domain; a failure discards one, the end of the trace closes them all.
  const open = new Map<string, { domain: string; steps: Step[] }>();
  for (const event of trace) {
    const episode = episodeOf(event.data);
    const domain = textField(event.data, "domain") ?? "general";
    const key = JSON.stringify([episode, domain]);
    if (event.kind === "action_failed") {
      open.delete(key);
      continue;
    }
    const run = open.get(key) ?? { domain, steps: [] };
    run.steps.push({ event, episode });
    open.set(key, run);
  }
  const groups = new Map<string, Group>();
  for (const { domain, steps } of open.values()) {
    const tools = steps.map((s) => s.event.tool);
    const groupKey = JSON.stringify([domain, tools]);
    const group = groups.get(groupKey) ?? { domain, tools, runs: [] };
    group.runs.push(steps);
    groups.set(groupKey, group);
  }

  const candidates: DistilledSkill[] = [];
  for (const group of groups.values()) if (group.runs.length >= minOccurrences) candidates.push(candidateOf(group));
  return candidates;
}

function candidateOf(group: Group): DistilledSkill {
  const { domain, tools, runs } = group;
  const steps = runs.flat();
  const rewards = steps.map((s) => s.event.reward);
  const tasks = runs.map((run) => textField(run[0]!.event.data, "task")).filter((t): t is string => t !== undefined);
  const personas = new Set(steps.map((s) => textField(s.event.data, "persona") ?? textField(s.event.data, "role") ?? ""));
  return {
    name: `${domain}/${tools.join("+")}`,
    description: `Run ${tools.join(", then ")}; succeeded ${runs.length} times in the ${domain} domain.`,
    when_to_apply: tasks.length > 0 ? `Tasks like: ${tasks[0]}` : `Work in the ${domain} domain.`,
    domain,
    code: tools.join(" → "),
    trigger: { persona: personas.size === 1 ? [...personas][0]! : "", url_pattern: "", task_keywords: commonKeywords(tasks) },
    source: "success",
    scope: { domain },
    evidence: {
      occurrences: runs.length,
      episodes: [...new Set(runs.map((run) => run[0]!.episode))],
      action_ids: steps.map((s) => s.event.action_id).filter((id): id is string => id !== undefined),
      mean_reward: rewards.reduce((a, b) => a + b, 0) / rewards.length,
      tools,
    },
  };
}

function episodeOf(data: JsonObject): string {
  return textField(data, "episode") ?? textField(data, "run_id") ?? textField(data, "task") ?? "";
}

function textField(data: JsonObject, key: string): string | undefined {
  const v = getOwn(data, key);
  return typeof v === "string" ? v : undefined;
}

/** Words (not stop words) found in more than half of the tasks, most frequent first. */
function commonKeywords(tasks: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const task of tasks) for (const word of new Set(wordsOf(task))) counts.set(word, (counts.get(word) ?? 0) + 1);
  return [...counts]
    .filter(([word, n]) => n * 2 > tasks.length && !STOP_WORDS.has(word))
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, MAX_KEYWORDS)
    .map(([word]) => word);
}

/** Lower-case words of letters only, three or more long. */
export function wordsOf(text: string): string[] {
  return text.toLowerCase().match(/\p{L}{3,}/gu) ?? [];
}
