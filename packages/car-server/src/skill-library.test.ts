/**
 * The skill library's own bounds, without a server: a caller naming ever
 * new tenant ids cannot make it keep unboundedly many stores, and a
 * tenant's view writes its own copy, never the global record.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ingestDistilledSkills, reportOutcome } from "@car/engine/skills";
import { isCarError } from "@car/ir";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_OPEN_OWNERS, SkillLibrary } from "./skill-library.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const skill = (name: string) => ({ name, code: `${name}()`, domain: "d" });

const TENANTS = ["alice", "bob", undefined] as const;
const NAMES = ["x", "y"] as const;

describe("SkillLibrary", () => {
  it("whatever tenants ingest and report, each sees only its own skills over the global ones, with only its own outcomes counted", () => {
    const op = fc.record({
      tenant: fc.constantFrom(...TENANTS),
      name: fc.constantFrom(...NAMES),
      kind: fc.constantFrom("ingest", "report", "publish"),
    });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const library = SkillLibrary.inMemory();
        // The model: who holds which name (own copy), whose code it is, and how many outcomes each tenant counted.
        const owns = new Map<string, string>();
        const outcomes = new Map<string, number>();
        const global = new Map<string, string>();
        const key = (t: string | undefined, n: string) => `${t ?? "-"}/${n}`;
        for (const { tenant, name, kind } of ops) {
          const view = library.view(tenant);
          const k = key(tenant, name);
          if (kind === "ingest") {
            ingestDistilledSkills(view, [{ name, code: `${tenant ?? "-"}:${name}`, domain: "d" }]);
            owns.set(k, `${tenant ?? "-"}:${name}`);
          } else if (kind === "publish") {
            ingestDistilledSkills(library.global, [{ name, code: `global:${name}`, domain: "d" }]);
            global.set(name, `global:${name}`);
          } else if (owns.has(k) || global.has(name)) {
            reportOutcome(view, name, "failed");
            if (!owns.has(k)) owns.set(k, global.get(name)!);
            outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
          } else {
            expect(() => reportOutcome(view, name, "failed")).toThrow(/no skill named/);
          }
        }
        for (const tenant of TENANTS) {
          const view = library.view(tenant);
          for (const name of NAMES) {
            const k = key(tenant, name);
            const expected = owns.get(k) ?? global.get(name);
            expect(view.get(name)?.code, k).toBe(expected);
            if (owns.has(k)) expect(library.own(tenant).history(name).at(-1)?.stats.fail_count ?? 0, k).toBeLessThanOrEqual(outcomes.get(k) ?? 0);
            else expect(library.own(tenant).history(name), k).toEqual([]);
          }
        }
        for (const name of NAMES) expect(library.global.get(name)?.stats.fail_count ?? 0).toBe(0);
      }),
      { numRuns: 200 },
    );
  });

  it("closes empty stores to make room; in memory, a library full of tenants' skills refuses one more", () => {
    const library = SkillLibrary.inMemory();
    // Reads under many fresh tenant ids hold nothing, so they never fill the library.
    for (let i = 0; i < MAX_OPEN_OWNERS * 2; i++) expect(library.view(`reader${i}`).list()).toEqual([]);
    let error: unknown;
    let filled = 0;
    for (; filled <= MAX_OPEN_OWNERS && error === undefined; filled++) {
      try {
        ingestDistilledSkills(library.view(`t${filled}`), [skill("s")]);
      } catch (e) {
        error = e;
      }
    }
    expect(isCarError(error, "budget_exceeded"), String(error)).toBe(true);
    // The global store and at most MAX_OPEN_OWNERS - 1 tenants: then no more.
    expect(filled).toBeLessThanOrEqual(MAX_OPEN_OWNERS);
    expect(library.view("t0").get("s")?.code).toBe("s()");
  });

  it("with files, reopens a closed tenant's store from its file, losing nothing", () => {
    const dir = mkdtempSync(join(tmpdir(), "car-skill-library-"));
    dirs.push(dir);
    const library = SkillLibrary.inDirectory(dir);
    ingestDistilledSkills(library.view("first"), [skill("kept")]);
    for (let i = 0; i < MAX_OPEN_OWNERS; i++) ingestDistilledSkills(library.view(`t${i}`), [skill("s")]);
    expect(library.view("first").get("kept")?.code).toBe("kept()");
  });

  it("counts a tenant's outcome on a global skill on the tenant's own copy", () => {
    const library = SkillLibrary.inMemory();
    ingestDistilledSkills(library.global, [skill("shared")]);
    ingestDistilledSkills(library.global, [{ ...skill("shared"), code: "v2()" }]);
    reportOutcome(library.view("bob"), "shared", "failed");
    expect(library.global.get("shared")!.stats.fail_count).toBe(0);
    expect(
      library
        .own("bob")
        .history("shared")
        .map((r) => [r.version, r.stats.fail_count]),
    ).toEqual([
      [1, 0],
      [2, 1],
    ]);
    expect(library.view("alice").ownerOf("shared")).toBe("global");
  });
});
