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
import { afterEach, describe, expect, it } from "vitest";
import { MAX_OPEN_OWNERS, SkillLibrary } from "./skill-library.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const skill = (name: string) => ({ name, code: `${name}()`, domain: "d" });

describe("SkillLibrary", () => {
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
