/**
 * `permission.evaluate` / `permission.pending` with `skill`: the named
 * skill's `deployment_tier` caps the session's standing tier for the
 * evaluation (`min(granted, deployment_tier)`), echoed as `skill_ceiling`,
 * over a real WebSocket. The skill is looked up in the caller's tenant's
 * skills and the global ones only, so another tenant's skill cannot be
 * named, and a ceiling never widens a tier.
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
  carHome = await mkdtemp(join(tmpdir(), "car-serve-skill-ceiling-"));
  server = await startServer({ port: 0, carHome, standingTier: "full_access" });
});
afterAll(async () => {
  for (const c of clients) c.socket.terminate();
  await server.close({ graceMs: 0 });
  await rm(carHome, { recursive: true, force: true });
});

async function connect(): Promise<TestClient> {
  const c = await TestClient.open(server.url, server.token);
  clients.push(c);
  return c;
}

/** One sandbox_edit action: allowed in a full_access session, escalated under a read_only ceiling. */
const proposal = { id: "edit", actions: [{ id: "w", type: "tool_call", tool: "write_file", parameters: { path: "notes.txt", content: "x" } }] };

describe("permission.evaluate and permission.pending with a skill", () => {
  it("caps the standing tier at the skill's deployment_tier and echoes it as skill_ceiling", async () => {
    const c = await connect();
    expect(await c.result("permission.set_tier", { tier: "full_access" })).toEqual({ granted_tier: "full_access" });
    await c.result("skill.ingest", { name: "reader", code: "cat", deployment_tier: "read_only", tenant_id: "alice" });
    await c.result("skill.ingest", { name: "editor", code: "vi", deployment_tier: "sandbox_edit", tenant_id: "alice" });
    await c.result("skill.ingest", { name: "ungoverned", code: "ls", tenant_id: "alice" });

    const plain = await c.result("permission.evaluate", { proposal });
    expect(plain).toEqual({ decisions: [expect.objectContaining({ decision: "allow", required: "sandbox_edit", granted: "full_access" })] });

    const capped = await c.result("permission.evaluate", { proposal, skill: "reader", tenant_id: "alice" });
    expect(capped.skill_ceiling).toBe("read_only");
    expect(capped.decisions).toEqual([
      expect.objectContaining({
        action_id: "w",
        decision: "needs_approval",
        required: "sandbox_edit",
        granted: "read_only",
        reversibility: expect.any(String),
      }),
    ]);
    const pending = await c.result("permission.pending", { proposal, skill: "reader", tenant_id: "alice" });
    expect(pending).toEqual({ pending: [capped.decisions[0]], skill_ceiling: "read_only" });
    expect(await c.result("permission.pending", { proposal })).toEqual({ pending: [] });

    expect(await c.result("permission.evaluate", { proposal, skill: "editor", tenant_id: "alice" })).toEqual({
      decisions: [expect.objectContaining({ decision: "allow", granted: "sandbox_edit" })],
      skill_ceiling: "sandbox_edit",
    });
    // A skill without a deployment tier caps nothing, and no ceiling is claimed.
    expect(await c.result("permission.evaluate", { proposal, skill: "ungoverned", tenant_id: "alice" })).toEqual(plain);
  });

  it("never widens the tier, and finds only the caller's tenant's or global skills", async () => {
    const c = await connect();
    await c.result("skill.ingest", { name: "wide", code: "x", deployment_tier: "full_access", tenant_id: "alice" });
    await c.result("permission.set_tier", { tier: "read_only" });
    const wide = await c.result("permission.evaluate", { proposal, skill: "wide", tenant_id: "alice" });
    expect(wide).toEqual({ decisions: [expect.objectContaining({ decision: "needs_approval", granted: "read_only" })], skill_ceiling: "full_access" });

    for (const params of [
      { proposal, skill: "wide", tenant_id: "bob" },
      { proposal, skill: "wide" },
      { proposal, skill: "nothing", tenant_id: "alice" },
    ]) {
      for (const method of ["permission.evaluate", "permission.pending"]) {
        const reply = await c.call(method, params);
        expect(reply.error, `${method} ${JSON.stringify(params.tenant_id)}`).toMatchObject({ code: -32040, data: { car_code: "not_found" } });
      }
    }
    // A skill without a proposal has nothing to cap: refused, not ignored; a tier outside the three is refused at ingest.
    expect((await c.call("permission.pending", { skill: "wide", tenant_id: "alice" })).error).toMatchObject({ code: -32602 });
    expect((await c.call("skill.ingest", { name: "odd", code: "x", deployment_tier: "root", tenant_id: "alice" })).error).toMatchObject({
      code: -32602,
      message: expect.stringContaining("deployment_tier"),
    });
  });
});
