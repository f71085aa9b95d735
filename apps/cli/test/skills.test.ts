/**
 * `car skills distill` over a journal of the runtime's real events, and
 * `car skills list` over a real skill file, run as the `car` process.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Runtime } from "@car/engine";
import { JsonFileSkillStore, ingestDistilledSkills, reportOutcome } from "@car/engine/skills";
import { runCar } from "./run-car.ts";

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "car-skills-cli-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The events of two runs of fetch → parse and one that failed at parse, as JSON lines. */
async function journal(): Promise<string> {
  const rt = new Runtime();
  rt.registerTool("fetch", () => "page");
  rt.registerTool("parse", (p) => {
    if (p["fail"] === true) throw new Error("bad page");
    return "parsed";
  });
  for (const [id, fail] of [
    ["p1", false],
    ["p2", false],
    ["p3", true],
  ] as const) {
    await rt.executeProposal({
      id,
      actions: [
        { id: "a", type: "tool_call", tool: "fetch" },
        { id: "b", type: "tool_call", tool: "parse", parameters: { fail }, dependencies: ["a"] },
      ],
    });
  }
  return rt.events
    .query()
    .map((e) => JSON.stringify(e))
    .join("\n");
}

describe("car skills distill", () => {
  it("distills the sequences that kept succeeding from a journal of the runtime's events", async () => {
    const path = join(dir, "journal.jsonl");
    await writeFile(path, `${await journal()}\n`);
    const printed = await runCar(["skills", "distill", path]);
    expect(printed.stderr).toBe("");
    expect(printed.code).toBe(0);
    const skills = JSON.parse(printed.stdout);
    expect(skills.map((s: { name: string; evidence: { occurrences: number } }) => [s.name, s.evidence.occurrences])).toEqual([["general/fetch+parse", 2]]);

    const out = join(dir, "skills-out.json");
    const written = await runCar(["skills", "distill", "-o", out, path]);
    expect(written.code).toBe(0);
    expect(JSON.parse(await readFile(out, "utf8"))).toEqual(skills);
  });

  it("reads trace events too, and refuses a line that is not an event with exit 2", async () => {
    const trace = ["e1", "e2"].flatMap((episode) => [{ kind: "action_succeeded", tool: "grep", data: { episode, domain: "code" }, reward: 1 }]);
    const ok = await runCar(["skills", "distill", "-"], { input: trace.map((t) => JSON.stringify(t)).join("\n") });
    expect(JSON.parse(ok.stdout).map((s: { name: string }) => s.name)).toEqual(["code/grep"]);

    const bad = await runCar(["skills", "distill", "-"], { input: '{"kind":"action_succeeded","tool":"x","data":{},"reward":1}\nnot json\n' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/-:2: not JSON/);
    expect((await runCar(["skills", "distill"])).code).toBe(2);
  });
});

describe("car skills list", () => {
  it("lists a skill file's skills, filtered by domain, as a table or JSON", async () => {
    const path = join(dir, "skills.json");
    const store = new JsonFileSkillStore(path);
    ingestDistilledSkills(store, [
      { name: "deploy", code: "ship", domain: "ops" },
      { name: "lint", code: "biome check", domain: "code" },
    ]);
    for (let i = 0; i < 3; i++) reportOutcome(store, "deploy", "fail");

    const table = await runCar(["skills", "list", path]);
    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^NAME\s+VERSION\s+STATUS\s+DOMAIN\s+OK\s+FAIL$/);
    expect(lines[1]).toMatch(/^deploy\s+1\s+active \(degraded\)\s+ops\s+0\s+3$/);
    expect(lines).toHaveLength(3);

    const json = await runCar(["skills", "list", "--domain", "code", "--json", path]);
    expect(JSON.parse(json.stdout).map((s: { name: string }) => s.name)).toEqual(["lint"]);

    const help = await runCar(["skills", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: car skills distill");
    expect((await runCar(["skills", "forget"])).code).toBe(2);

    const missing = await runCar(["skills", "list", join(dir, "nope.json")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no such file/);
  });
});
