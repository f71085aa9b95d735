/**
 * Skills are owned, attacked over a real WebSocket on a server with a
 * database (so every session shares one skill library): tenant bob's
 * agent tries to see, find, export, report on, repair, promote and
 * overwrite tenant alice's skills; an agent tries to publish globally and
 * delete; a skill name reused across tenants; an import and a batch far
 * past the bounds; and the skills file every session shared before owners
 * existed, adopted as the unscoped callers' (never global, never a
 * tenant's).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openCarDatabase } from "./car-database.ts";
import { MAX_SKILL_BYTES, MAX_SKILLS_PER_CALL } from "./skill-library.ts";
import { type RunningServer, startServer } from "./server.ts";
import { TestClient } from "../test/test-client.ts";

let carHome: string;
let server: RunningServer;
let closeStore: () => Promise<void>;
const clients: TestClient[] = [];

/** A skill every session could see and write before owners existed. */
const LEGACY = {
  name: "legacy-cleanup",
  description: "",
  when_to_apply: "",
  domain: "ops",
  code: "legacy-code",
  trigger: { persona: "", url_pattern: "", task_keywords: [] },
  source: "manual",
  scope: { domain: "ops" },
  version: 1,
  change: "ingested",
  derived_from: [],
  created_at: "2025-01-01T00:00:00.000Z",
  stats: { success_count: 0, fail_count: 0, last_outcome_at: null },
  broken_for_repair: false,
};

beforeAll(async () => {
  carHome = await mkdtemp(join(tmpdir(), "car-serve-skills-tenancy-"));
  writeFileSync(join(carHome, "skills.json"), JSON.stringify({ format: "car-skills/1", skills: [LEGACY] }));
  const store = await openCarDatabase(join(carHome, "car.db"), { env: { CAR_HOME: carHome } });
  closeStore = () => store.close();
  server = await startServer({ port: 0, carHome, store });
});
afterAll(async () => {
  for (const c of clients) c.socket.terminate();
  await server.close({ graceMs: 0 });
  await closeStore();
  await rm(carHome, { recursive: true, force: true });
});

async function connect(agentId?: string): Promise<TestClient> {
  const c = await TestClient.open(agentId === undefined ? server.url : `${server.url}?agent_id=${agentId}`, server.token);
  clients.push(c);
  return c;
}

const names = (skills: { name: string }[]): string[] => skills.map((s) => s.name);

describe("skills belong to a tenant", () => {
  it("another tenant's agent cannot see, find, export, report on, repair or promote them", async () => {
    const alice = await connect("alice-bot");
    const bob = await connect("bob-bot");
    const A = { tenant_id: "alice" };
    const B = { tenant_id: "bob" };
    await alice.result("skill.ingest", { name: "payroll", code: "alice-private-code", platform: "hr", task_keywords: ["pay"], ...A });
    await alice.result("skills.ingest_provisional", { skills: [{ name: "payroll", code: "alice-candidate-code", domain: "hr" }], ...A });

    const attempts: [string, object][] = [
      ["skill.find", { task: "pay", max_results: 10 }],
      ["skill.find", { domain: "hr", max_results: 10 }],
      ["skill.find", {}],
      ["skills.list", {}],
      ["skills.list", { domain: "hr" }],
      ["skill.meta", { key: "payroll" }],
      ["skill.meta", { key: "payroll@cand" }],
      ["skill.export", { key: "payroll" }],
      ["skill.repair", { skill_name: "payroll" }],
      ["skills.domains_needing_evolution", { threshold: 1 }],
      ["skills.gate", {}],
    ];
    // From bob's tenant, and from no tenant: nothing of alice's.
    for (const scope of [B, {}]) {
      for (const [method, params] of attempts) {
        const reply = await bob.call(method, { ...params, ...scope });
        expect(reply.error, method).toBeUndefined();
        expect(JSON.stringify(reply.result), `${method} ${JSON.stringify(scope)}`).not.toMatch(/alice-|payroll/);
      }
      for (const skill_name of ["payroll", "payroll@cand"]) {
        for (const outcome of ["success", "failure"]) {
          const reply = await bob.call("skill.report", { skill_name, outcome, ...scope });
          expect(reply.error, skill_name).toMatchObject({ data: { car_code: "not_found" } });
        }
      }
    }
    // A tenant id cannot be bent into alice's.
    for (const tenant_id of ["alice:", "tenant:alice", "ALICE ", "alice/.."]) {
      expect((await bob.call("skill.find", { tenant_id })).error, tenant_id).toMatchObject({ code: -32602 });
    }

    // Alice's own record is untouched: no outcome from bob, and her candidate still on trial, promoted only by her own outcomes.
    expect(await alice.result("skill.meta", { key: "payroll", ...A })).toMatchObject({ version: 1, owner: "own", stats: { success_count: 0, fail_count: 0 } });
    for (let i = 0; i < 5; i++) await alice.result("skill.report", { skill_name: "payroll@cand", outcome: "success", ...A });
    expect(await alice.result("skills.gate", A)).toEqual({ promoted: ["payroll@cand"], rejected: [] });
    expect(await alice.result("skill.find", { domain: "hr", ...A })).toMatchObject([{ name: "payroll", code: "alice-candidate-code", owner: "own" }]);
  });

  it("a skill name reused by two tenants names two skills, each with its own versions and track record", async () => {
    const alice = await connect("alice-bot");
    const bob = await connect("bob-bot");
    expect(await alice.result("skill.ingest", { name: "deploy", code: "alice deploy", tenant_id: "alice" })).toBe(1);
    expect(await bob.result("skill.ingest", { name: "deploy", code: "bob deploy", tenant_id: "bob" })).toBe(1);
    expect(await bob.result("skill.ingest", { name: "deploy", code: "bob deploy v2", tenant_id: "bob" })).toBe(2);
    for (let i = 0; i < 4; i++) await bob.result("skill.report", { skill_name: "deploy", outcome: "crashed", tenant_id: "bob" });
    const a = await alice.result("skill.meta", { key: "deploy", tenant_id: "alice" });
    expect(a).toMatchObject({ version: 1, stats: { success_count: 0, fail_count: 0 } });
    expect((await alice.result("skill.find", { tenant_id: "alice" })).find((s: { name: string }) => s.name === "deploy")).toMatchObject({
      code: "alice deploy",
      broken_for_repair: false,
    });
    expect(await bob.result("skill.meta", { key: "deploy", tenant_id: "bob" })).toMatchObject({ version: 2, stats: { fail_count: 4 } });
  });

  it("publishing and deleting are operator acts; a tenant's outcomes on a global skill count on its own copy only", async () => {
    const operator = await connect();
    const alice = await connect("alice-bot");
    const bob = await connect("bob-bot");
    await alice.result("skill.ingest", { name: "backup", code: "restic backup", platform: "ops", tenant_id: "alice" });
    const doc: string = await alice.result("skill.export", { key: "backup", tenant_id: "alice" });

    for (const [method, params] of [
      ["skill.publish", { key: "backup", tenant_id: "alice" }],
      ["skill.publish", { markdown: doc }],
      ["skill.delete", { key: "backup", tenant_id: "alice" }],
      ["skill.delete", { key: "legacy-cleanup" }],
    ] as const) {
      const refused = await alice.call(method, params);
      expect(refused.error, method).toMatchObject({ code: -32001, data: { car_code: "unauthorized" } });
    }
    // The agent's import lands in its own tenant, never globally: bob does not see it.
    expect(await alice.result("skill.import", { markdown: doc, tenant_id: "alice" })).toEqual({ imported: true });
    expect(await alice.result("skill.meta", { key: "backup", tenant_id: "alice" })).toMatchObject({ version: 2, change: "imported" });
    expect(names(await bob.result("skills.list", { tenant_id: "bob" }))).not.toContain("backup");
    expect(names(await bob.result("skills.list"))).not.toContain("backup");

    expect(await operator.result("skill.publish", { key: "backup", tenant_id: "alice" })).toEqual({ published: "backup", version: 1 });
    const seen = await bob.result("skill.find", { domain: "ops", max_results: 10, tenant_id: "bob" });
    expect(seen).toMatchObject([{ name: "backup", code: "restic backup", owner: "global" }]);
    // Bob's failures degrade bob's copy; the global record and alice's own stay as they were.
    for (let i = 0; i < 3; i++) await bob.result("skill.report", { skill_name: "backup", outcome: "failed", tenant_id: "bob" });
    expect(await bob.result("skill.meta", { key: "backup", tenant_id: "bob" })).toMatchObject({ owner: "own", stats: { fail_count: 3 } });
    expect(await operator.result("skill.meta", { key: "backup", tenant_id: "carol" })).toMatchObject({
      owner: "global",
      stats: { success_count: 0, fail_count: 0 },
    });
    expect(await alice.result("skill.meta", { key: "backup", tenant_id: "alice" })).toMatchObject({ owner: "own", stats: { fail_count: 0 } });

    expect(await operator.result("skill.delete", { key: "backup", global: true })).toEqual({ deleted: true });
    expect(await operator.result("skill.find", { domain: "ops", tenant_id: "carol" })).toEqual([]);
    expect(await operator.result("skill.delete", { key: "backup", tenant_id: "bob" })).toEqual({ deleted: true });
    expect(await bob.result("skill.meta", { key: "backup", tenant_id: "bob" })).toBeNull();
    expect(await alice.result("skill.meta", { key: "backup", tenant_id: "alice" })).toMatchObject({ owner: "own" });
    const mixed = await operator.call("skill.delete", { key: "backup", global: true, tenant_id: "alice" });
    expect(mixed.error).toMatchObject({ code: -32602 });
  });

  it("bounds an import and a batch with budget_exceeded, storing nothing", async () => {
    const bob = await connect("bob-bot");
    const huge = `+++\nformat = "car-skill/1"\nname = "huge"\ncode = "${"x".repeat(MAX_SKILL_BYTES + 1)}"\n+++\n`;
    const imported = await bob.call("skill.import", { markdown: huge, tenant_id: "bob" });
    expect(imported.error).toMatchObject({ code: -32026, data: { car_code: "budget_exceeded" } });
    const big = await bob.call("skill.ingest", { name: "huge", code: "y".repeat(MAX_SKILL_BYTES + 1), tenant_id: "bob" });
    expect(big.error).toMatchObject({ data: { car_code: "budget_exceeded" } });
    const many = Array.from({ length: MAX_SKILLS_PER_CALL + 1 }, (_, i) => ({ name: `s${i}`, code: "c", domain: "d" }));
    for (const method of ["skills.ingest_distilled", "skills.ingest_provisional"]) {
      const reply = await bob.call(method, { skills: many, tenant_id: "bob" });
      expect(reply.error, method).toMatchObject({ data: { car_code: "budget_exceeded" } });
    }
    expect(names(await bob.result("skills.list", { tenant_id: "bob" }))).not.toEqual(expect.arrayContaining(["huge", "s0"]));
  });

  it("adopts the skills every session shared before owners as the unscoped callers', never global or a tenant's", async () => {
    const c = await connect("bob-bot");
    expect(names(await c.result("skills.list"))).toContain("legacy-cleanup");
    expect(names(await c.result("skills.list", { tenant_id: "bob" }))).not.toContain("legacy-cleanup");
    expect(await c.result("skill.meta", { key: "legacy-cleanup" })).toMatchObject({ owner: "own", version: 1 });
    expect(JSON.parse(readFileSync(join(carHome, "skills.json"), "utf8"))).toMatchObject({ owner: "unscoped", skills: [{ name: "legacy-cleanup" }] });
  });
});
