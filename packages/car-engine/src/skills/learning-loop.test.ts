/**
 * The worked example of the guide, end to end and deterministic: a
 * two-stage pipeline runs six times, its outcomes become a trace, the trace
 * is distilled into skills, outcomes are reported, the weak domain is
 * evolved and the improved skill is the one found next time.
 */
import { getOwn, manualClock, sequentialIds } from "@car/ir";
import type { AgentSpec, TraceEvent } from "@car/ir";
import { describe, expect, it } from "vitest";
import { output } from "../../test/multi/agents.ts";
import { Runtime } from "../index.ts";
import { runPipeline } from "../multi/index.ts";
import type { AgentFn } from "../multi/index.ts";
import {
  InMemorySkillStore,
  distillSkills,
  domainsNeedingEvolution,
  evolveSkills,
  findSkill,
  ingestDistilledSkills,
  repairSkill,
  reportOutcome,
} from "./index.ts";

const stages: AgentSpec[] = [
  { name: "web_scraper", system_prompt: "scrape web pages", tools: ["http_get"], max_turns: 3, metadata: { domain: "web" } },
  { name: "summarizer", system_prompt: "summarize text", tools: [], max_turns: 1, metadata: { domain: "text" } },
];

/** The scraper times out on rounds 1 and 4; everything else works. */
const agent: AgentFn = (spec, task) => {
  const round = Number(/#(\d+)/.exec(task)![1]);
  if (spec.name === "web_scraper") {
    return round === 1 || round === 4
      ? output("web_scraper", "", "timeout fetching page")
      : { ...output("web_scraper", `scraped data for: ${task}`), tool_calls: 1 };
  }
  return output("summarizer", `summary: ${task.slice(0, 40)}...`);
};

async function runRounds(rt: Runtime): Promise<TraceEvent[]> {
  const trace: TraceEvent[] = [];
  for (let i = 0; i < 6; i++) {
    const task = `research topic #${i}`;
    const result = await runPipeline(stages, task, agent, { runtime: rt });
    for (const [j, stage] of result.stages.entries()) {
      // A stage the runtime did not start is not evidence about that stage.
      if (result.cut_off.some((c) => c.name === stage.name && c.call_id === undefined)) continue;
      trace.push({
        kind: stage.error === null ? "action_succeeded" : "action_failed",
        action_id: `round${i}_${stage.name}`,
        tool: stage.name,
        data: { task, role: stage.name, domain: getOwn(stages[j]!.metadata, "domain") as string },
        reward: stage.error === null ? 1 : 0,
      });
    }
  }
  return trace;
}

describe("the learning loop", () => {
  it("distils, ingests, reports, finds the weak domain, evolves it and repairs a degraded skill", async () => {
    const clock = manualClock(Date.UTC(2025, 0, 1));
    const rt = new Runtime({ clock, ids: sequentialIds("run") });
    const trace = await runRounds(rt);
    expect(trace.filter((e) => e.kind === "action_failed").map((e) => e.action_id)).toEqual(["round1_web_scraper", "round4_web_scraper"]);
    expect(trace).toHaveLength(10);
    expect(rt.events.count({ kinds: ["multi_run_completed"] })).toBe(6);

    const candidates = distillSkills(trace);
    expect(candidates.map((c) => [c.name, c.evidence!.occurrences])).toEqual([
      ["web/web_scraper", 4],
      ["text/summarizer", 4],
    ]);
    expect(candidates[0]!.trigger.task_keywords).toEqual(["research", "topic"]);

    const store = new InMemorySkillStore();
    expect(ingestDistilledSkills(store, candidates, { clock })).toBe(2);

    for (let i = 0; i < 4; i++) reportOutcome(store, "web/web_scraper", "success", { clock });
    for (let i = 0; i < 3; i++) reportOutcome(store, "web/web_scraper", "fail", { clock });
    for (let i = 0; i < 2; i++) reportOutcome(store, "text/summarizer", "success", { clock });
    expect(domainsNeedingEvolution(store, 0.6)).toEqual(["web"]);

    const evolved = await evolveSkills(
      store,
      "web",
      ({ skills, failures }) =>
        skills.map((s) => ({ ...s, code: `${s.code} (retry ×3 on timeout)`, description: `${s.description} Retries after ${failures.length} timeouts.` })),
      { events: trace, clock },
    );
    expect(evolved.map((s) => [s.name, s.version, s.change, s.derived_from])).toEqual([
      ["web/web_scraper", 2, "evolved", [{ name: "web/web_scraper", version: 1 }]],
    ]);
    expect(evolved[0]!.description).toMatch(/Retries after 2 timeouts\.$/);
    expect(domainsNeedingEvolution(store, 0.6)).toEqual([]);

    const [found] = findSkill(store, { domain: "web", task: "research topic #7" });
    expect(found).toMatchObject({ name: "web/web_scraper", version: 2, code: "web_scraper (retry ×3 on timeout)" });

    for (let i = 0; i < 4; i++) reportOutcome(store, "text/summarizer", "fail", { clock });
    expect(store.get("text/summarizer")!.broken_for_repair).toBe(false); // 4 failures, 2 successes: not yet
    expect(reportOutcome(store, "text/summarizer", "fail", { clock }).degraded_now).toBe(true);
    expect(domainsNeedingEvolution(store, 0.6)).toEqual(["text"]);
    const repaired = await repairSkill(store, "text/summarizer", ({ skill }) => `${skill.code} (shorter prompt)`, { clock });
    expect(repaired).toMatchObject({ version: 2, change: "repaired", broken_for_repair: false, derived_from: [{ name: "text/summarizer", version: 1 }] });
    expect(store.history("text/summarizer").map((s) => s.stats.fail_count)).toEqual([5, 0]);
  });
});
