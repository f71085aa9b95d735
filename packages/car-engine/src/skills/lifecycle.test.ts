/**
 * The validation-gated lifecycle (provisional candidates and the promotion
 * gate), skill meta, the portable markdown form, and evolve/repair without
 * a user-supplied improver.
 */
import fc from "fast-check";
import { isCarError, manualClock } from "@car/ir";
import type { TraceEvent } from "@car/ir";
import { describe, expect, it } from "vitest";
import {
  InMemorySkillStore,
  evolveSkills,
  exportSkill,
  findSkill,
  importSkill,
  ingestDistilledSkills,
  ingestProvisionalSkills,
  repairSkill,
  reportOutcome,
  runPromotionGate,
  skillMeta,
  wilsonLowerBound,
} from "./index.ts";

const clock = manualClock(0);

function report(store: InMemorySkillStore, name: string, successes: number, failures: number): void {
  for (let i = 0; i < successes; i++) reportOutcome(store, name, "success");
  for (let i = 0; i < failures; i++) reportOutcome(store, name, "fail");
}

describe("provisional candidates and the promotion gate", () => {
  it("trials a candidate beside its incumbent and promotes it only when its Wilson bound strictly beats the incumbent's", () => {
    const store = new InMemorySkillStore();
    ingestDistilledSkills(store, [{ name: "deploy", code: "old", domain: "ops" }], { clock });
    report(store, "deploy", 2, 3);
    expect(ingestProvisionalSkills(store, [{ name: "deploy", code: "new", domain: "ops" }], { clock })).toBe(1);
    // Already on trial: dropped from the count.
    expect(ingestProvisionalSkills(store, [{ name: "deploy", code: "newer", domain: "ops" }], { clock })).toBe(0);
    expect(skillMeta(store, "deploy@cand")).toMatchObject({ status: "provisional", incumbent: "deploy", version: 1, platform: "ops" });
    expect(skillMeta(store, "deploy")).toMatchObject({ status: "active", incumbent: null });

    report(store, "deploy@cand", 3, 0);
    expect(runPromotionGate(store)).toEqual({ promoted: [], rejected: [] }); // 3 < 5 samples
    report(store, "deploy@cand", 2, 0);
    expect(runPromotionGate(store)).toEqual({ promoted: ["deploy@cand"], rejected: [] });
    const promoted = store.get("deploy")!;
    expect(promoted).toMatchObject({ code: "new", version: 2, change: "promoted", stats: { success_count: 0, fail_count: 0 } });
    expect(promoted.derived_from).toEqual([
      { name: "deploy@cand", version: 1 },
      { name: "deploy", version: 1 },
    ]);
    expect(skillMeta(store, "deploy@cand")).toBeNull();
    expect(() => reportOutcome(store, "deploy@cand", "success")).toThrow(/promoted/);
  });

  it("rejects a candidate that does not beat its incumbent, and never trials the same edit again", () => {
    const store = new InMemorySkillStore();
    ingestDistilledSkills(store, [{ name: "s", code: "good", domain: "d" }], { clock });
    report(store, "s", 20, 0);
    ingestProvisionalSkills(store, [{ name: "s", code: "worse", domain: "d" }], { clock });
    report(store, "s@cand", 4, 1);
    expect(runPromotionGate(store)).toEqual({ promoted: [], rejected: ["s@cand"] });
    expect(store.get("s")!.code).toBe("good");
    expect(ingestProvisionalSkills(store, [{ name: "s", code: "worse", domain: "d" }], { clock })).toBe(0);
    // A different edit may trial.
    expect(ingestProvisionalSkills(store, [{ name: "s", code: "other", domain: "d" }], { clock })).toBe(1);
    expect(store.get("s@cand")).toMatchObject({ version: 2, status: "provisional" });
    // Candidates do not speak for their domain and a rejected one is not found.
    expect(findSkill(store, { domain: "d" }, 5).map((m) => [m.name, m.platform])).toEqual([
      ["s", "d"],
      ["s@cand", "d"],
    ]);
  });

  it("refuses candidate keys as names and an edit identical to the incumbent", () => {
    const store = new InMemorySkillStore();
    ingestDistilledSkills(store, [{ name: "s", code: "x", domain: "d" }], { clock });
    expect(ingestProvisionalSkills(store, [{ name: "s", code: "x", domain: "d" }], { clock })).toBe(0);
    const error = (() => {
      try {
        ingestProvisionalSkills(store, [{ name: "s@cand", code: "y", domain: "d" }]);
      } catch (e) {
        return e;
      }
    })();
    expect(isCarError(error, "invalid_params")).toBe(true);
  });

  it("the Wilson lower bound is below the observed rate, rises with evidence, and is 0 without any", () => {
    expect(wilsonLowerBound(0, 0)).toBe(0);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 500 }), fc.integer({ min: 0, max: 500 }), (n, k) => {
        const s = Math.min(k, n);
        const lb = wilsonLowerBound(s, n);
        expect(lb).toBeGreaterThanOrEqual(0);
        expect(lb).toBeLessThanOrEqual(s / n + 1e-12);
        // The same rate on twice the samples is at least as trustworthy.
        expect(wilsonLowerBound(2 * s, 2 * n)).toBeGreaterThanOrEqual(lb - 1e-12);
      }),
    );
  });
});

describe("skill.export / skill.import", () => {
  it("round-trips an active skill through its markdown form as a fresh version with zeroed stats", () => {
    const from = new InMemorySkillStore();
    ingestDistilledSkills(
      from,
      [
        {
          name: "fetch-page",
          code: 'fetch "$URL" | clean\n\u007f',
          domain: "web",
          description: "Fetch, then clean",
          trigger: { task_keywords: ["fetch", "page"] },
        },
      ],
      { clock },
    );
    report(from, "fetch-page", 4, 1);
    const doc = exportSkill(from, "fetch-page")!;
    expect(doc.startsWith('+++\nformat = "car-skill/1"\n')).toBe(true);
    expect(doc).toMatch(/^sha256 = "[0-9a-f]{64}"$/m);
    expect(doc).toContain("# fetch-page");

    const to = new InMemorySkillStore();
    const imported = importSkill(to, doc, { clock });
    expect(imported).toMatchObject({ name: "fetch-page", version: 1, change: "imported", code: from.get("fetch-page")!.code, domain: "web" });
    expect(imported.stats).toEqual({ success_count: 0, fail_count: 0, last_outcome_at: null });
    expect(imported.trigger.task_keywords).toEqual(["fetch", "page"]);
  });

  it("refuses a tampered or malformed document and exports only active, healthy skills", () => {
    const store = new InMemorySkillStore();
    ingestDistilledSkills(store, [{ name: "s", code: "x", domain: "d" }], { clock });
    const doc = exportSkill(store, "s")!;
    const tampered = doc.replace('code = "x"', 'code = "rm -rf /"');
    for (const bad of [tampered, "no frontmatter", '+++\nformat = "car-skill/1"\n', doc.replace("format = ", "formt = ")]) {
      const error = (() => {
        try {
          importSkill(new InMemorySkillStore(), bad);
        } catch (e) {
          return e;
        }
      })();
      expect(isCarError(error, "invalid_params"), bad.slice(0, 40)).toBe(true);
    }
    expect(exportSkill(store, "missing")).toBeNull();
    ingestProvisionalSkills(store, [{ name: "s", code: "y", domain: "d" }]);
    expect(exportSkill(store, "s@cand")).toBeNull();
    report(store, "s", 0, 3);
    expect(exportSkill(store, "s")).toBeNull(); // degraded
  });

  it("any skill content survives export and import", () => {
    const text = fc.string({ unit: "binary", maxLength: 40 });
    fc.assert(
      fc.property(
        text.filter((s) => s.trim() !== "" && !s.endsWith("@cand")),
        text,
        text,
        fc.array(text, { maxLength: 4 }),
        (name, code, description, keywords) => {
          const from = new InMemorySkillStore();
          ingestDistilledSkills(from, [{ name, code, description, domain: "d", trigger: { task_keywords: keywords } }]);
          const to = new InMemorySkillStore();
          const imported = importSkill(to, exportSkill(from, name)!);
          expect([imported.name, imported.code, imported.description, imported.trigger.task_keywords]).toEqual([name, code, description, keywords]);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("evolve and repair without a user-supplied improver", () => {
  const ev = (kind: TraceEvent["kind"], tool: string, episode: string): TraceEvent => ({ kind, tool, data: { episode, domain: "web" }, reward: 1 });
  const trace = [
    ev("action_succeeded", "fetch", "e1"),
    ev("action_succeeded", "parse", "e1"),
    ev("action_succeeded", "fetch", "e2"),
    ev("action_succeeded", "parse", "e2"),
  ];

  it("evolves a domain by re-distilling the trace, and takes a given evolver when one is passed", async () => {
    const store = new InMemorySkillStore();
    const evolved = await evolveSkills(store, "web", undefined, { events: trace, clock });
    expect(evolved.map((s) => [s.name, s.code, s.change])).toEqual([["web/fetch+parse", "fetch → parse", "evolved"]]);
    const mine = await evolveSkills(store, "web", () => [{ name: "mine", code: "by hand" }], { clock });
    expect(mine.map((s) => s.name)).toEqual(["mine"]);
  });

  it("repairs a degraded skill with a sequence that keeps succeeding, or answers null when there is none", async () => {
    const store = new InMemorySkillStore();
    ingestDistilledSkills(store, [{ name: "broken", code: "old()", domain: "web" }], { clock });
    report(store, "broken", 0, 3);
    expect(await repairSkill(store, "broken", undefined, { events: [] })).toBeNull();
    const repaired = await repairSkill(store, "broken", null, { events: trace, clock });
    expect(repaired).toMatchObject({ code: "fetch → parse", change: "repaired", version: 2 });
  });
});
