/**
 * One admission path: the same hostile proposal, sent through each source
 * of actions a connection has — `proposal.submit`, the model behind
 * `planner.run`, and a skill's code run as the skills loop runs it (found
 * with `skill.find`, submitted naming the skill) — meets the same refusal,
 * in the same words, and nothing of it runs. The skills methods themselves
 * run nothing: a skill's code reaches the runtime only this way.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "./server.ts";
import { TestClient } from "../test/test-client.ts";

let carHome: string;
let server: RunningServer;
const clients: TestClient[] = [];

beforeAll(async () => {
  carHome = await mkdtemp(join(tmpdir(), "car-serve-admission-"));
  server = await startServer({ port: 0, carHome, limits: { maxActionsPerProposal: 5 } });
});
afterAll(async () => {
  for (const c of clients) c.socket.terminate();
  await server.close({ graceMs: 0 });
  await rm(carHome, { recursive: true, force: true });
});

const HOSTILE: Record<string, { id: string; actions: object[] }> = {
  "a tenant's key": { id: "steal", actions: [{ id: "w", type: "state_write", parameters: { key: "tenant:alice:secret", value: "x" } }] },
  "more actions than the server takes": {
    id: "flood",
    actions: Array.from({ length: 6 }, (_, i) => ({ id: `w${i}`, type: "state_write", parameters: { key: `k${i}`, value: i } })),
  },
};

describe("every source of actions passes the same admission", () => {
  for (const [what, proposal] of Object.entries(HOSTILE)) {
    it(`refuses ${what} alike through proposal.submit and planner.run`, async () => {
      const c = await TestClient.open(server.url, server.token);
      clients.push(c);
      c.handle("planner.propose", () => ({ result: proposal }));
      const submitted = await c.call("proposal.submit", { proposal });
      expect(submitted.error).toBeDefined();
      const planned = await c.result("planner.run", { task: "t", max_attempts: 1 });
      expect(planned.outcome).toBe("exhausted");
      expect(planned.attempts[0].verdict).toBe("invalid_proposal");
      expect(planned.attempts[0].feedback.message ?? JSON.stringify(planned.attempts[0].feedback)).toContain(submitted.error!.message);
      // The skills loop: the proposal stored as a skill's code, found, and run naming the skill.
      await c.result("skill.ingest", { name: `hostile-${proposal.id}`, code: JSON.stringify(proposal), platform: "attack" });
      const [found] = await c.result("skill.find", { domain: "attack", max_results: 1 });
      const fromSkill = await c.call("proposal.submit", { proposal: JSON.parse(found.code), skill: found.name });
      expect(fromSkill.error).toEqual(submitted.error);
      // Nothing of any of them ran, and no skills method dispatched a tool or wrote state.
      expect(await c.result("state.keys")).toEqual([]);
      expect(c.frames.filter((f) => f.method === "tools.execute")).toEqual([]);
    });
  }

  it("holds a skill's deployment_tier at admission exactly as a session at that tier is held", async () => {
    const capped = await TestClient.open(server.url, server.token);
    const atTier = await TestClient.open(server.url, server.token);
    clients.push(capped, atTier);
    const write = { id: "note", actions: [{ id: "w", type: "tool_call", tool: "write_file", parameters: { path: "n.txt", content: "x" } }] };
    for (const c of [capped, atTier]) {
      c.handle("tools.execute", () => ({ result: "written" }));
      await c.result("tools.register", [{ name: "write_file" }]);
    }
    await capped.result("skill.ingest", { name: "reader", code: JSON.stringify(write), deployment_tier: "read_only" });
    await atTier.result("permission.set_tier", { tier: "read_only" });
    const refusal = async (c: TestClient, params: object) => {
      const { results } = await c.result("proposal.submit", params);
      return results.map(({ timestamp: _, ...rest }: { timestamp: string }) => rest);
    };
    const viaSkill = await refusal(capped, { proposal: write, skill: "reader" });
    expect(viaSkill).toEqual([expect.objectContaining({ status: "rejected", error: expect.stringContaining("read_only") })]);
    expect(viaSkill).toEqual(await refusal(atTier, { proposal: write }));
    // Without the skill the same connection's sandbox_edit tier runs it: the cap came from the skill alone.
    expect(await capped.result("proposal.submit", { proposal: write })).toMatchObject({ results: [{ status: "succeeded" }] });
    expect(capped.frames.filter((f) => f.method === "tools.execute")).toHaveLength(1);
    expect((await capped.call("proposal.submit", { proposal: write, skill: "nobody-has-this" })).error).toMatchObject({ data: { car_code: "not_found" } });
    // A tenant's skill is named within the proposal's scope, and only there.
    await capped.result("skill.ingest", { name: "alice-reader", code: "x", deployment_tier: "read_only", tenant_id: "alice" });
    expect(await refusal(capped, { proposal: write, skill: "alice-reader", scope: { tenantId: "alice" } })).toEqual(viaSkill);
    const outside = await capped.call("proposal.submit", { proposal: write, skill: "alice-reader", scope: { tenantId: "bob" } });
    expect(outside.error).toMatchObject({ data: { car_code: "not_found" } });
  });
});
