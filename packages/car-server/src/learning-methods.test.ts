/**
 * The reference methods that answered -32601 before: the skills loop fed by
 * the runtime's own events, capabilities, metrics, per-agent cost and the
 * approval work-queue.
 */
import { describe, expect, it } from "vitest";
import { type TestClient, useTestServer } from "../test/test-client.ts";

const fx = useTestServer("car-serve-learning-");

async function runSequence(c: TestClient, id: string, tools: string[]): Promise<void> {
  const actions = tools.map((tool, i) => ({ id: `s${i}`, type: "tool_call", tool, ...(i > 0 ? { dependencies: [`s${i - 1}`] } : {}) }));
  const r = await c.result("proposal.submit", { proposal: { id, actions } });
  expect(r.results.every((x: { status: string }) => x.status === "succeeded")).toBe(true);
}

describe("skills.* fed by the runtime's events", () => {
  it("distills, ingests, lists, finds, reports, flags the weak domain, repairs and evolves", async () => {
    const c = await fx.client();
    await c.result("tools.register", [{ name: "fetch" }, { name: "parse" }, { name: "store" }]);
    c.handle("tools.execute", () => ({ result: { ok: true } }));
    for (const id of ["ep1", "ep2", "ep3"]) await runSequence(c, id, ["fetch", "parse"]);

    const distilled = await c.result("skills.distill", {});
    expect(distilled).toHaveLength(1);
    expect(distilled[0]).toMatchObject({ domain: "general", evidence: { occurrences: 3, tools: ["fetch", "parse"], episodes: ["ep1", "ep2", "ep3"] } });
    expect(await c.result("skills.ingest_distilled", { skills: distilled })).toEqual({ ingested: 1 });

    expect(await c.result("skill.ingest", { name: "legacy", code: "old_way()", task_keywords: ["fetch"], description: "the old way" })).toBe(1);
    expect((await c.result("skills.list", {})).map((s: { name: string }) => s.name).sort()).toEqual([distilled[0].name, "legacy"].sort());
    expect((await c.result("skills.find", { task: "fetch the page", max_results: 5 })).map((s: { name: string }) => s.name)).toContain("legacy");

    for (let i = 0; i < 3; i++) await c.result("skills.report_outcome", { skill_name: "legacy", outcome: "fail" });
    const stats = await c.result("skill.report", { skill_name: distilled[0].name, outcome: "success" });
    expect(stats.stats.success_count).toBe(1);
    expect(await c.result("skills.domains_needing_evolution", { threshold: 0.6 })).toEqual(["general"]);

    // legacy is degraded (3 failures); the sequence that keeps succeeding becomes its code.
    expect(await c.result("skills.repair", { skill_name: "legacy" })).toEqual({ code: distilled[0].code });
    expect(await c.result("skills.repair", { skill_name: "legacy" })).toBeNull();

    // A new sequence that succeeds twice is what evolving the domain records.
    for (const id of ["ep4", "ep5"]) await runSequence(c, id, ["fetch", "store"]);
    const evolved = await c.result("skills.evolve", { domain: "general" });
    expect(evolved.map((s: { evidence: { tools: string[] } }) => s.evidence.tools)).toEqual([["fetch", "store"]]);
    expect((await c.call("skills.evolve", {})).error?.code).toBe(-32602);
  });
});

describe("capabilities, metrics and the approval queue", () => {
  it("capabilities.list names every method with its role", async () => {
    const c = await fx.client();
    const caps = await c.result("capabilities.list", {});
    expect(caps.caller_role).toBe("operator");
    expect(caps.count).toBe(caps.methods.length);
    const byMethod = new Map(caps.methods.map((m: { method: string; role: string }) => [m.method, m.role]));
    for (const m of ["skills.distill", "metrics.summary", "events.cost_by_agent", "permission.pending", "proposal.submit", "capabilities.list"])
      expect(byMethod.get(m)).toBe("agent");
    expect(byMethod.get("permission.approve")).toBe("operator");
  });

  it("metrics.summary and events.cost_by_agent fold the session's events", async () => {
    const c = await fx.client();
    await c.result("tools.register", [{ name: "fetch" }]);
    c.handle("tools.execute", () => ({ result: "ok" }));
    await runSequence(c, "m1", ["fetch", "fetch"]);
    const metrics = await c.result("metrics.summary", null);
    expect(metrics).toMatchObject({ actions_succeeded: 2, actions_failed: 0, success_rate: 1, cost_usd: 0 });
    expect(metrics.total_events).toBeGreaterThan(4);
    const agent = (name: string) => ({ name, system_prompt: "", tools: [], max_turns: 1, metadata: {} });
    c.handle("multi.run_agent", (p) => ({ result: { name: p.spec.name, answer: "done", turns: 1, tool_calls: 0, duration_ms: 1, error: null } }));
    await c.result("multi.pipeline", { stages: [agent("alpha"), agent("beta")], task: "t" });
    const rows = await c.result("events.cost_by_agent", null);
    expect(rows).toEqual([
      { agent: "alpha", calls: 1, tokens_in: 0, tokens_out: 0, cost_usd: 0 },
      { agent: "beta", calls: 1, tokens_in: 0, tokens_out: 0, cost_usd: 0 },
    ]);
    expect((await c.result("metrics.summary", null)).cost_by_agent).toEqual(rows);
  });

  it("permission.pending lists only what needs approval, with reversibility", async () => {
    const c = await fx.client();
    const pending = await c.result("permission.pending", {
      proposal: {
        actions: [
          { id: "deploy", type: "tool_call", tool: "deploy_service", parameters: { target: "prod" } },
          { id: "note", type: "state_write", parameters: { key: "k", value: 1 } },
        ],
      },
    });
    expect(pending.pending.map((p: { action_id: string }) => p.action_id)).toEqual(["deploy"]);
    expect(pending.pending[0]).toMatchObject({ decision: "needs_approval", required: "full_access" });
    expect(typeof pending.pending[0].reversibility).toBe("string");
  });
});
