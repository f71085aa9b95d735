/**
 * `permission.approve` with a scope over a real WebSocket (DECISIONS §22):
 * `agent_id` binds the approval to that agent's connections, `uses` to a
 * number of executions; malformed scope fields are `invalid_params`.
 */
import { describe, expect, it } from "vitest";
import { TestClient, useTestServer } from "../test/test-client.ts";
import { openServeStore } from "./serve-store.ts";
import { startServer } from "./server.ts";
import { join } from "node:path";

const fx = useTestServer("car-serve-approval-scope-");
const SEND = { id: "s", type: "tool_call", tool: "send_email", parameters: { to: "ops@example.com" } };

async function agent(url: string, token: string | undefined, id: string): Promise<TestClient> {
  const c = fx.track(await TestClient.open(`${url}?agent_id=${id}`, token));
  await c.result("session.init", { client_id: id, tools: [{ name: "send_email" }] });
  c.handle("tools.execute", () => ({ result: "sent" }));
  return c;
}

const statusOf = async (c: TestClient): Promise<string> => (await c.result("proposal.submit", { proposal: { actions: [SEND] } })).results[0].status;

describe("permission.approve with a scope", () => {
  it("agent_id: bot's approval does not apply to eve; uses: 1 admits one execution", async () => {
    const store = (await openServeStore(join(fx.carHome, "scope.db"), { CAR_HOME: fx.carHome }))!;
    const server = await startServer({ port: 0, carHome: fx.carHome, store });
    try {
      const operator = fx.track(await TestClient.open(server.url, server.token));
      const approved = await operator.result("permission.approve", { action: SEND, agent_id: "bot", uses: 1, ttl_secs: 3600 });
      expect(approved).toMatchObject({ agent_id: "bot", uses: 1, decision: "approved" });
      expect(approved.expires_at - approved.decided_at).toBe(3_600_000);
      const eve = await agent(server.url, server.token, "eve");
      const bot = await agent(server.url, server.token, "bot");
      expect(await statusOf(eve)).toBe("rejected");
      expect(await statusOf(bot)).toBe("succeeded");
      expect(await statusOf(bot)).toBe("rejected");
    } finally {
      await server.close({ graceMs: 0 });
      await store.close?.();
    }
  }, 30_000);

  it("refuses malformed scope fields", async () => {
    const c = await fx.client();
    for (const bad of [{ uses: 0 }, { uses: 1.5 }, { ttl_secs: -1 }, { agent_id: 7 }]) {
      const reply = await c.call("permission.approve", { action: SEND, ...bad });
      expect(reply.error, JSON.stringify(bad)).toMatchObject({ data: { car_code: "invalid_params" } });
    }
  });
});
