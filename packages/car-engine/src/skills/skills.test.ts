import { isCarError, manualClock } from "@car/ir";
import type { TraceEvent } from "@car/ir";
import { describe, expect, it } from "vitest";
import type { DistilledSkill, DistilledSkillInput, SkillRecord } from "./index.ts";
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

const ev = (kind: TraceEvent["kind"], tool: string, data: Record<string, string>, action_id?: string): TraceEvent => ({
  kind,
  tool,
  data,
  reward: kind === "action_succeeded" ? 1 : 0,
  ...(action_id === undefined ? {} : { action_id }),
});

const skill = (name: string, domain: string, extra: Partial<DistilledSkill> = {}): DistilledSkillInput => ({ name, domain, code: `${name}()`, ...extra });

function storeWith(...skills: ReturnType<typeof skill>[]): InMemorySkillStore {
  const store = new InMemorySkillStore();
  ingestDistilledSkills(store, skills, { clock: manualClock(0) });
  return store;
}

function report(store: InMemorySkillStore, name: string, successes: number, failures: number): void {
  for (let i = 0; i < successes; i++) reportOutcome(store, name, "success");
  for (let i = 0; i < failures; i++) reportOutcome(store, name, "fail");
}

describe("distillSkills", () => {
  it("turns tool sequences that succeeded repeatedly in a domain into candidates with evidence", () => {
    const trace = [
      ev("action_succeeded", "fetch", { task: "summarize the article on rust", domain: "web", persona: "researcher" }, "r1a"),
      ev("action_succeeded", "clean", { task: "summarize the article on rust", domain: "web", persona: "researcher" }, "r1b"),
      ev("action_succeeded", "fetch", { task: "summarize the article on go", domain: "web", persona: "researcher" }, "r2a"),
      ev("action_succeeded", "clean", { task: "summarize the article on go", domain: "web", persona: "researcher" }, "r2b"),
      ev("action_succeeded", "fetch", { task: "summarize this blog", domain: "web", persona: "researcher" }, "r3a"),
      ev("action_failed", "clean", { task: "summarize this blog", domain: "web" }, "r3b"),
      ev("action_succeeded", "grep", { task: "find todo", domain: "code" }, "r4a"),
    ];
    const candidates = distillSkills(trace);
    expect(candidates).toEqual([
      {
        name: "web/fetch+clean",
        description: "Run fetch, then clean; succeeded 2 times in the web domain.",
        when_to_apply: "Tasks like: summarize the article on rust",
        domain: "web",
        code: "fetch → clean",
        trigger: { persona: "researcher", url_pattern: "", task_keywords: ["article", "summarize"] },
        source: "success",
        scope: { domain: "web" },
        evidence: {
          occurrences: 2,
          episodes: ["summarize the article on rust", "summarize the article on go"],
          action_ids: ["r1a", "r1b", "r2a", "r2b"],
          mean_reward: 1,
          tools: ["fetch", "clean"],
        },
      },
    ]);
    expect(distillSkills(trace, { minOccurrences: 1 }).map((c) => c.name)).toEqual(["web/fetch+clean", "code/grep"]);
  });

  it("groups by data.episode before data.task, and refuses a malformed event", () => {
    const trace = [ev("action_succeeded", "a", { episode: "e1", task: "x" }), ev("action_succeeded", "a", { episode: "e2", task: "x" })];
    expect(distillSkills(trace)[0]!.evidence!.episodes).toEqual(["e1", "e2"]);
    expect(() => distillSkills([trace[0], { kind: "action_succeeded", tool: "a", data: {} }])).toThrow(/events\[1\].*reward/);
    expect(() => distillSkills(trace, { minOccurrences: 0 })).toThrow(/minOccurrences/);
  });
});

describe("ingestDistilledSkills", () => {
  it("stores candidates with defaults, a fresh track record and no lineage", () => {
    const clock = manualClock(Date.UTC(2025, 0, 2));
    const store = new InMemorySkillStore();
    expect(ingestDistilledSkills(store, [{ name: "s", code: "do()", scope: { domain: "ops" } }], { clock })).toBe(1);
    expect(store.get("s")).toEqual({
      name: "s",
      description: "",
      when_to_apply: "",
      domain: "ops",
      code: "do()",
      trigger: { persona: "", url_pattern: "", task_keywords: [] },
      source: "manual",
      scope: { domain: "ops" },
      version: 1,
      change: "ingested",
      derived_from: [],
      created_at: "2025-01-02T00:00:00.000Z",
      stats: { success_count: 0, fail_count: 0, last_outcome_at: null },
      broken_for_repair: false,
    } satisfies SkillRecord);
  });

  it("re-ingesting the same skill stores nothing; a changed one becomes the next version", () => {
    const store = storeWith(skill("s", "ops"));
    expect(ingestDistilledSkills(store, [skill("s", "ops")])).toBe(0);
    expect(ingestDistilledSkills(store, [skill("s", "ops", { code: "better()" })])).toBe(1);
    expect(store.history("s").map((r) => [r.version, r.code, r.derived_from])).toEqual([
      [1, "s()", []],
      [2, "better()", [{ name: "s", version: 1 }]],
    ]);
  });

  it("stores nothing from a batch with a malformed skill", () => {
    const store = new InMemorySkillStore();
    let error: unknown;
    try {
      ingestDistilledSkills(store, [skill("ok", "d"), { name: "bad", code: 3, trigger: { task_keywords: "x" } } as never]);
    } catch (e) {
      error = e;
    }
    expect(isCarError(error, "invalid_params")).toBe(true);
    expect((error as { details: { problems: unknown[] } }).details.problems).toEqual([
      { pointer: "/1/code", message: "required string" },
      { pointer: "/1/domain", message: "required string" },
      { pointer: "/1/trigger/task_keywords", message: "must be an array of strings" },
    ]);
    expect(store.list()).toEqual([]);
  });
});

describe("reportOutcome and degradation", () => {
  it("degrades exactly when fail_count > success_count + 2", () => {
    const store = storeWith(skill("a", "d"), skill("b", "d"));
    report(store, "a", 0, 2);
    expect(store.get("a")!.broken_for_repair).toBe(false);
    const third = reportOutcome(store, "a", false);
    expect(third).toMatchObject({ stats: { success_count: 0, fail_count: 3 }, broken_for_repair: true, degraded_now: true });

    report(store, "b", 4, 6);
    expect(store.get("b")!.broken_for_repair).toBe(false);
    expect(reportOutcome(store, "b", "fail")).toMatchObject({ broken_for_repair: true, degraded_now: true, success_rate: 4 / 11 });
  });

  it("keeps a degraded skill degraded until it is repaired", () => {
    const store = storeWith(skill("a", "d"));
    report(store, "a", 0, 3);
    const later = reportOutcome(store, "a", true);
    expect(later).toMatchObject({ broken_for_repair: true, degraded_now: false });
    report(store, "a", 5, 0);
    expect(store.get("a")!.broken_for_repair).toBe(true);
  });

  it("stamps outcomes and refuses unknown skills and outcomes", () => {
    const store = storeWith(skill("a", "d"));
    reportOutcome(store, "a", "success", { clock: manualClock(Date.UTC(2025, 5, 1)) });
    expect(store.get("a")!.stats.last_outcome_at).toBe("2025-06-01T00:00:00.000Z");
    expect(() => reportOutcome(store, "nope", true)).toThrow(/no skill named 'nope'/);
    expect(() => reportOutcome(store, "a", "sucess")).toThrow(/misspelled "success"/);
    expect(() => reportOutcome(store, "a", "Success")).toThrow(/misspelled "success"/);
    expect(() => reportOutcome(store, "a", "")).toThrow(/outcome must be/);
    // Any other outcome the reference allows counts as a failure, and says so.
    expect(reportOutcome(store, "a", "timeout")).toMatchObject({ counted_as: "failure", stats: { success_count: 1, fail_count: 1 } });
    expect(reportOutcome(store, "a", "fail").counted_as).toBe("failure");
    expect(reportOutcome(store, "a", "success").counted_as).toBe("success");
  });
});

describe("domainsNeedingEvolution", () => {
  it("lists domains whose pooled success rate is below the threshold, worst first", () => {
    const store = storeWith(skill("scrape", "web"), skill("summary", "text"), skill("fmt", "code"), skill("lint", "code"), skill("unused", "misc"));
    report(store, "scrape", 4, 3); // 0.571
    report(store, "summary", 2, 0); // 1.0
    report(store, "fmt", 1, 1);
    report(store, "lint", 0, 2); // code pooled 1/4
    expect(domainsNeedingEvolution(store)).toEqual(["code", "web"]);
    expect(domainsNeedingEvolution(store, 0.5)).toEqual(["code"]);
    expect(() => domainsNeedingEvolution(store, 2)).toThrow(/threshold/);
  });

  it("includes a domain with a degraded skill even when the pooled rate is fine", () => {
    const store = storeWith(skill("good", "ops"), skill("bad", "ops"));
    report(store, "good", 20, 0);
    report(store, "bad", 0, 3);
    expect(domainsNeedingEvolution(store)).toEqual(["ops"]);
  });
});

describe("evolveSkills", () => {
  it("shows the improver the domain's skills and failures and records what it returns with lineage", async () => {
    const store = storeWith(skill("scrape", "web"), skill("other", "text"));
    report(store, "scrape", 1, 3);
    const events = [
      ev("action_failed", "fetch", { domain: "web", task: "t" }),
      ev("action_failed", "fmt", { domain: "text" }),
      ev("action_succeeded", "fetch", { domain: "web" }),
    ];
    let seen: unknown;
    const evolved = await evolveSkills(
      store,
      "web",
      (request) => {
        seen = { domain: request.domain, skills: request.skills.map((s) => s.name), failures: request.failures.map((f) => f.tool) };
        return [
          { ...skill("scrape", "web"), code: "scrape_with_retry()" },
          { name: "scrape_cached", code: "cache_then_scrape()" },
        ];
      },
      { events },
    );
    expect(seen).toEqual({ domain: "web", skills: ["scrape"], failures: ["fetch"] });
    expect(evolved.map((r) => [r.name, r.version, r.change, r.domain, r.derived_from])).toEqual([
      ["scrape", 2, "evolved", "web", [{ name: "scrape", version: 1 }]],
      ["scrape_cached", 1, "evolved", "web", [{ name: "scrape", version: 1 }]],
    ]);
    expect(store.get("scrape")!.stats).toEqual({ success_count: 0, fail_count: 0, last_outcome_at: null });

    // Skills handed back unchanged are no evolution: no new versions.
    reportOutcome(store, "scrape", "success");
    expect(await evolveSkills(store, "web", ({ skills }) => skills)).toEqual([]);
    expect(store.history("scrape")).toHaveLength(2);
    expect(store.get("scrape")!.stats.success_count).toBe(1);
  });

  it("refuses an improver's malformed or foreign-domain skills and wraps its failures", async () => {
    const store = storeWith(skill("s", "web"));
    await expect(evolveSkills(store, "web", () => [{ name: "x" } as DistilledSkillInput])).rejects.toSatisfy((e) => isCarError(e, "invalid_output"));
    await expect(evolveSkills(store, "web", () => "nope" as never)).rejects.toSatisfy((e) => isCarError(e, "invalid_output"));
    await expect(evolveSkills(store, "web", () => [skill("y", "text")])).rejects.toThrow(/domain 'text', not 'web'/);
    await expect(
      evolveSkills(store, "web", () => {
        throw new Error("model unavailable");
      }),
    ).rejects.toSatisfy((e) => isCarError(e, "tool_error") && /model unavailable/.test((e as Error).message));
    expect(store.list().map((s) => s.name)).toEqual(["s"]);
  });
});

describe("repairSkill", () => {
  it("does nothing for a healthy skill", async () => {
    const store = storeWith(skill("s", "d"));
    let called = false;
    expect(await repairSkill(store, "s", () => ((called = true), "x"))).toBeNull();
    expect(called).toBe(false);
    await expect(repairSkill(store, "ghost", () => "x")).rejects.toSatisfy((e) => isCarError(e, "not_found"));
  });

  it("records the repaired code as the next version, healthy, derived from the broken one", async () => {
    const store = storeWith(skill("deploy", "ops", { description: "ship it", trigger: { persona: "engineer", url_pattern: "", task_keywords: ["deploy"] } }));
    report(store, "deploy", 0, 3);
    const repaired = await repairSkill(store, "deploy", (request) => ({
      code: `${request.skill.code} --retry`,
      trigger: { task_keywords: ["deploy", "ship"] },
    }));
    expect(repaired).toMatchObject({
      version: 2,
      change: "repaired",
      code: "deploy() --retry",
      description: "ship it",
      trigger: { persona: "engineer", url_pattern: "", task_keywords: ["deploy", "ship"] },
      derived_from: [{ name: "deploy", version: 1 }],
      broken_for_repair: false,
      stats: { success_count: 0, fail_count: 0 },
    });
    expect(store.history("deploy")[0]!.broken_for_repair).toBe(true);
  });

  it("returns null when the improver gives up", async () => {
    const store = storeWith(skill("s", "d"));
    report(store, "s", 0, 3);
    expect(await repairSkill(store, "s", () => null)).toBeNull();
    expect(store.get("s")!.version).toBe(1);
  });
});

describe("findSkill", () => {
  it("ranks by domain match and track record; a degraded skill still appears, last", () => {
    const store = storeWith(
      skill("deploy-staging", "deploy", { trigger: { persona: "engineer", url_pattern: "", task_keywords: ["deploy", "staging", "ship"] } }),
      skill("deploy-old", "deploy", { trigger: { persona: "", url_pattern: "", task_keywords: ["deploy", "staging"] } }),
      skill("browse", "web", { trigger: { persona: "", url_pattern: "https://*", task_keywords: ["open"] } }),
    );
    report(store, "deploy-staging", 5, 0);
    report(store, "deploy-old", 0, 3);
    const found = findSkill(store, { domain: "deploy", task: "ship this branch to staging", persona: "engineer" }, 5);
    expect(found.map((f) => [f.name, f.broken_for_repair])).toEqual([
      ["deploy-staging", false],
      ["deploy-old", true],
    ]);
    expect(found[0]!.match_score).toBeCloseTo((2 + 2 / 3 + 0.5) * (6 / 7));
    expect(findSkill(store, { url: "https://example.com/a" }).map((f) => f.name)).toEqual(["browse"]);
    expect(findSkill(store, { url: "ftp://example.com" })).toEqual([]);
  });

  it("prefers the better track record between equally relevant skills, and lists all for an empty query", () => {
    const store = storeWith(skill("a", "d"), skill("b", "d"), skill("c", "e"));
    report(store, "a", 1, 1);
    report(store, "b", 3, 0);
    expect(findSkill(store, { domain: "D" }, 3).map((f) => f.name)).toEqual(["b", "a"]);
    expect(findSkill(store, {}, 3).map((f) => f.name)).toEqual(["b", "a", "c"]);
    expect(findSkill(store, {}).length).toBe(1);
  });
});
