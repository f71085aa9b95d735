import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isCarError, manualClock } from "@car/ir";
import { afterEach, describe, expect, it } from "vitest";
import type { SkillRecord, SkillStore } from "./index.ts";
import { InMemorySkillStore, JsonFileSkillStore, SKILL_FILE_FORMAT, exportSkill, importSkill, ingestDistilledSkills, reportOutcome } from "./index.ts";

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "car-skills-"));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function record(name: string, version: number): SkillRecord {
  return {
    name,
    description: "",
    when_to_apply: "",
    domain: "d",
    code: `${name} v${version}`,
    trigger: { persona: "", url_pattern: "", task_keywords: [] },
    source: "manual",
    scope: { domain: "d" },
    version,
    change: version === 1 ? "ingested" : "evolved",
    derived_from: version === 1 ? [] : [{ name, version: version - 1 }],
    created_at: "2025-01-01T00:00:00.000Z",
    stats: { success_count: 0, fail_count: 0, last_outcome_at: null },
    broken_for_repair: false,
  };
}

const stores: [string, () => SkillStore][] = [
  ["InMemorySkillStore", () => new InMemorySkillStore()],
  ["JsonFileSkillStore", () => new JsonFileSkillStore(join(tempDir(), "skills.json"))],
];

describe.each(stores)("%s", (_name, make) => {
  it("keeps every version, returns the latest, and lists by name", () => {
    const store = make();
    store.put(record("b", 1));
    store.put(record("a", 1));
    store.put(record("b", 2));
    expect(store.get("b")!.code).toBe("b v2");
    expect(store.history("b").map((r) => r.version)).toEqual([1, 2]);
    expect(store.list().map((r) => `${r.name}@${r.version}`)).toEqual(["a@1", "b@2"]);
    expect(store.get("zzz")).toBeUndefined();
    expect(store.history("zzz")).toEqual([]);
  });

  it("replaces the latest version in place and refuses gaps and rewrites of history", () => {
    const store = make();
    store.put(record("a", 1));
    store.put({ ...record("a", 1), stats: { success_count: 1, fail_count: 0, last_outcome_at: null } });
    expect(store.history("a")).toHaveLength(1);
    expect(store.get("a")!.stats.success_count).toBe(1);
    store.put(record("a", 2));
    for (const version of [1, 4]) {
      expect(() => store.put(record("a", version))).toThrow(/cannot store version/);
    }
    expect(() => store.put(record("new", 2))).toThrow(/latest is 0/);
  });

  it("deletes every version of one name, and says whether there was one", () => {
    const store = make();
    store.put(record("a", 1));
    store.put(record("a", 2));
    store.put(record("b", 1));
    expect(store.delete("a")).toBe(true);
    expect(store.delete("a")).toBe(false);
    expect(store.history("a")).toEqual([]);
    expect(store.list().map((r) => r.name)).toEqual(["b"]);
    store.put(record("a", 1));
    expect(store.get("a")!.version).toBe(1);
  });

  it("hands out copies", () => {
    const store = make();
    const r = record("a", 1);
    store.put(r);
    r.code = "changed after put";
    const got = store.get("a")!;
    got.trigger.task_keywords.push("changed after get");
    expect(store.get("a")!.code).toBe("a v1");
    expect(store.get("a")!.trigger.task_keywords).toEqual([]);
  });
});

describe("JsonFileSkillStore persistence", () => {
  it("round-trips through the file: a new store on the same path sees every version and stat", () => {
    const path = join(tempDir(), "nested", "skills.json");
    const first = new JsonFileSkillStore(path);
    ingestDistilledSkills(first, [{ name: "s", code: "one()", domain: "ops", scope: JSON.parse('{"domain": "ops", "__proto__": "kept as a key"}') as never }], {
      clock: manualClock(0),
    });
    ingestDistilledSkills(first, [{ name: "s", code: "two()", domain: "ops" }], { clock: manualClock(0) });
    reportOutcome(first, "s", "fail", { clock: manualClock(0) });

    const second = new JsonFileSkillStore(path);
    expect(second.history("s")).toEqual(first.history("s"));
    expect(second.get("s")!.stats.fail_count).toBe(1);
    expect(Object.keys(second.history("s")[0]!.scope)).toContain("__proto__");
    const doc = JSON.parse(readFileSync(path, "utf8")) as { format: string; skills: unknown[] };
    expect(doc.format).toBe(SKILL_FILE_FORMAT);
    expect(doc.skills).toHaveLength(2);
    expect(readdirSync(join(path, ".."))).toEqual(["skills.json"]);
  });

  it("treats a missing file as empty and creates it on the first change only", () => {
    const path = join(tempDir(), "skills.json");
    const store = new JsonFileSkillStore(path);
    expect(store.list()).toEqual([]);
    expect(existsSync(path)).toBe(false);
    store.put(record("a", 1));
    expect(existsSync(path)).toBe(true);
  });

  it("refuses a corrupt or foreign file with storage_error", () => {
    const dir = tempDir();
    const cases: [string, RegExp][] = [
      ["{not json", /not valid/],
      [JSON.stringify({ format: "other", skills: [] }), /"format"/],
      [JSON.stringify({ format: SKILL_FILE_FORMAT, skills: [{ name: "a" }] }), /skills\[0\]/],
      [JSON.stringify({ format: SKILL_FILE_FORMAT, skills: [record("a", 2)] }), /cannot store version 2/],
    ];
    for (const [i, [text, message]] of cases.entries()) {
      const path = join(dir, `bad${i}.json`);
      writeFileSync(path, text);
      let error: unknown;
      try {
        new JsonFileSkillStore(path);
      } catch (e) {
        error = e;
      }
      expect(isCarError(error, "storage_error")).toBe(true);
      expect((error as Error).message).toMatch(message);
    }
  });

  it("records its owner, refuses another owner's file, and adopts an unowned file only when told to", () => {
    const dir = tempDir();
    const alice = join(dir, "alice.json");
    new JsonFileSkillStore(alice, { owner: "tenant:alice" }).put(record("a", 1));
    expect(JSON.parse(readFileSync(alice, "utf8"))).toMatchObject({ format: SKILL_FILE_FORMAT, owner: "tenant:alice" });
    expect(new JsonFileSkillStore(alice, { owner: "tenant:alice" }).get("a")!.version).toBe(1);
    expect(() => new JsonFileSkillStore(alice, { owner: "tenant:bob" })).toThrow(/holds the skills of 'tenant:alice', not 'tenant:bob'/);
    // Opened without an owner (a reader such as `car skills list`), the file keeps the owner it names.
    const reader = new JsonFileSkillStore(alice);
    expect(reader.owner).toBe("tenant:alice");
    reader.put(record("a", 2));
    expect(JSON.parse(readFileSync(alice, "utf8")).owner).toBe("tenant:alice");

    const legacy = join(dir, "legacy.json");
    writeFileSync(legacy, JSON.stringify({ format: SKILL_FILE_FORMAT, skills: [record("old", 1)] }));
    let refused: unknown;
    try {
      new JsonFileSkillStore(legacy, { owner: "global" });
    } catch (e) {
      refused = e;
    }
    expect(isCarError(refused, "storage_error")).toBe(true);
    expect((refused as Error).message).toMatch(/names no owner/);
    expect(JSON.parse(readFileSync(legacy, "utf8")).owner).toBeUndefined();
    // Adopted: the owner is written at once, and the next open holds the file to it.
    expect(new JsonFileSkillStore(legacy, { owner: "unscoped", adoptUnowned: true }).get("old")!.version).toBe(1);
    expect(JSON.parse(readFileSync(legacy, "utf8"))).toMatchObject({ owner: "unscoped", skills: [{ name: "old" }] });
    expect(() => new JsonFileSkillStore(legacy, { owner: "global", adoptUnowned: true })).toThrow(/holds the skills of 'unscoped'/);
    writeFileSync(legacy, JSON.stringify({ format: SKILL_FILE_FORMAT, owner: 7, skills: [] }));
    expect(() => new JsonFileSkillStore(legacy)).toThrow(/"owner" must be a non-empty string/);
  });

  it("undoes a change the file cannot take", () => {
    const parent = join(tempDir(), "store");
    const store = new JsonFileSkillStore(join(parent, "skills.json"));
    store.put(record("a", 1));
    // The store's directory is replaced by a file: the next write cannot land.
    rmSync(parent, { recursive: true });
    writeFileSync(parent, "a file where the store wants a directory");
    expect(() => store.put(record("a", 2))).toThrow(/cannot write the skill file/);
    expect(() => store.put(record("b", 1))).toThrow(/cannot write the skill file/);
    expect(store.history("a").map((r) => r.version)).toEqual([1]);
    expect(store.get("b")).toBeUndefined();
  });
});

describe("a skill's deployment tier", () => {
  it("is kept across versions and through export and import, and a wrong tier is refused", () => {
    const store = new InMemorySkillStore();
    ingestDistilledSkills(store, [{ name: "probe", code: "ls", domain: "ops", deployment_tier: "read_only" }], { clock: manualClock(0) });
    expect(store.get("probe")!.deployment_tier).toBe("read_only");
    const doc = exportSkill(store, "probe")!;
    expect(doc).toContain('deployment_tier = "read_only"');
    const other = new InMemorySkillStore();
    expect(importSkill(other, doc).deployment_tier).toBe("read_only");
    // The tier is under the digest: raising it breaks the document.
    expect(() => importSkill(other, doc.replace('deployment_tier = "read_only"', 'deployment_tier = "full_access"'))).toThrow(/digest/);
    expect(() => ingestDistilledSkills(store, [{ name: "bad", code: "x", domain: "ops", deployment_tier: "root" as never }])).toThrow(/deployment_tier/);
    // A document written before the field existed still imports.
    ingestDistilledSkills(store, [{ name: "plain", code: "x", domain: "ops" }], { clock: manualClock(0) });
    expect(importSkill(other, exportSkill(store, "plain")!).deployment_tier).toBeUndefined();
  });
});
