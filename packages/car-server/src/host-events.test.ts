/**
 * `host.subscribe` / `host.event` and the halt latch over a real WebSocket:
 * `host.subscribe` needs `server.handshake` first (-32005) and an operator's
 * connection; a subscriber hears agents register and leave, their status,
 * approvals requested and resolved, and supervision intents parked and
 * decided. A terminal tool failure halts its connection (reference § A.7):
 * later proposals there are rejected whole until `session.clear_halt` or a
 * reconnect.
 */
import { describe, expect, it } from "vitest";
import { useTestServer } from "../test/test-client.ts";
import { TestClient } from "../test/test-client.ts";

const t = useTestServer("car-serve-host-");

const handshake = { protocol_version: 3 };

function kinds(c: TestClient): string[] {
  return c.notifications("host.event").map((f) => f.params.kind);
}

describe("host.subscribe", () => {
  it("is refused with -32005 before server.handshake, and after a failed one", async () => {
    const c = await t.client();
    const early = await c.call("host.subscribe", {});
    expect(early.error).toMatchObject({ code: -32005 });
    expect(early.error!.message).toMatch(/^protocol handshake required/);
    expect((await c.call("server.handshake", { protocol_version: 2 })).error).toMatchObject({ code: -32006 });
    expect((await c.call("host.subscribe", {})).error).toMatchObject({ code: -32005 });
    await c.result("server.handshake", handshake);
    expect(await c.result("host.subscribe", {})).toEqual({ subscribed: true });
    // Negotiation is per connection: a new one starts unnegotiated.
    const fresh = await t.client();
    expect((await fresh.call("host.subscribe", {})).error).toMatchObject({ code: -32005 });
  });

  it("is an operator's: an agent's connection gets -32001 even after the handshake", async () => {
    const agent = t.track(await TestClient.open(`${t.server.url}?agent_id=bot`, t.server.token));
    await agent.result("server.handshake", handshake);
    expect((await agent.call("host.subscribe", {})).error).toMatchObject({ code: -32001, data: { car_code: "unauthorized" } });
  });

  it("reports agents registering and leaving, their status, and supervision intents parked and decided", async () => {
    const host = await t.client();
    await host.result("server.handshake", handshake);
    await host.result("host.subscribe", {});
    const agent = t.track(await TestClient.open(`${t.server.url}?agent_id=worker-7`, t.server.token));
    await expect.poll(() => kinds(host)).toContain("agent_registered");
    expect(host.notifications("host.event").find((f) => f.params.kind === "agent_registered").params).toMatchObject({ agent_id: "worker-7" });

    const { session_id } = await agent.result("session.init", { client_id: "w" });
    await host.result("supervision.subscribe", { filter: { sessions: [session_id] } });
    const submitted = agent.result("proposal.submit", {
      proposal: { id: "hp", actions: [{ id: "w", type: "state_write", parameters: { key: "k", value: 1 } }] },
    });
    await expect.poll(() => host.notifications("supervision.intent").length).toBe(1);
    await host.result("supervision.decide", { intent_id: host.notifications("supervision.intent")[0].params.id, decision: { kind: "allow" } });
    await submitted;
    await expect.poll(() => kinds(host)).toContain("supervision_decided");
    const events = host.notifications("host.event").map((f) => f.params);
    expect(events.find((e) => e.kind === "supervision_parked")).toMatchObject({ proposal_id: "hp", session_id });
    expect(events.find((e) => e.kind === "supervision_decided")).toMatchObject({ proposal_id: "hp", decision: "allow" });
    const statuses = events.filter((e) => e.kind === "status_changed" && e.agent_id === "worker-7").map((e) => e.status);
    expect(statuses).toEqual(["running", "idle"]);

    await agent.close();
    await expect.poll(() => kinds(host)).toContain("agent_unregistered");
    // Unsubscribed, nothing more arrives.
    expect(await host.result("host.unsubscribe", {})).toEqual({ subscribed: false, was_subscribed: true });
    const before = host.notifications("host.event").length;
    t.track(await TestClient.open(`${t.server.url}?agent_id=worker-8`, t.server.token));
    await new Promise((r) => setTimeout(r, 100));
    expect(host.notifications("host.event")).toHaveLength(before);
  });

  it("reports an approval requested and resolved", async () => {
    const host = await t.client();
    await host.result("server.handshake", handshake);
    await host.result("host.subscribe", {});
    const c = await t.client();
    await c.result("tools.register", [{ name: "send_email" }]);
    c.handle("tools.execute", () => ({ result: "sent" }));
    const submitted = c.result("proposal.submit", {
      proposal: { id: "ap", actions: [{ id: "s", type: "tool_call", tool: "send_email", parameters: { to: "x@example.com" } }] },
      wait_for_approval_ms: 10_000,
    });
    await expect.poll(() => kinds(host)).toContain("approval_requested");
    const requested = host.notifications("host.event").find((f) => f.params.kind === "approval_requested").params;
    expect(requested).toMatchObject({ tool: "send_email", required: "full_access", proposal_id: "ap" });
    // This server keeps a ledger per session: the submitting operator connection approves for itself.
    await c.result("permission.approve", { fingerprint: requested.fingerprint, required_tier: "full_access" });
    expect((await submitted).results[0].status).toBe("succeeded");
    await expect.poll(() => kinds(host)).toContain("approval_resolved");
    expect(host.notifications("host.event").find((f) => f.params.kind === "approval_resolved").params).toMatchObject({
      fingerprint: requested.fingerprint,
      decision: "allow",
    });
  });
});

describe("the halt latch (§ A.7)", () => {
  async function halting(c: TestClient): Promise<string[]> {
    const called: string[] = [];
    await c.result("tools.register", [{ name: "journal" }, { name: "read_file" }]);
    c.handle("tools.execute", (p: { tool: string }) => {
      called.push(p.tool);
      return p.tool === "journal" ? { error: { code: -32000, message: "journal lost", data: { terminal: true } } } : { result: "ok" };
    });
    const failed = await c.result("proposal.submit", { proposal: { id: "t1", actions: [{ id: "j", type: "tool_call", tool: "journal" }] } });
    expect(failed.results[0]).toMatchObject({ status: "failed", terminal: true });
    return called;
  }

  const read = { id: "later", actions: [{ id: "r", type: "tool_call", tool: "read_file", parameters: { path: "a" } }] };

  it("a terminal failure halts the connection: later proposals are rejected whole and dispatch nothing until session.clear_halt", async () => {
    const c = await t.client();
    const called = await halting(c);
    const refused = await c.result("proposal.submit", { proposal: read });
    expect(refused.results).toHaveLength(1);
    expect(refused.results[0].status).toBe("rejected");
    expect(refused.results[0].error).toContain("session halted");
    expect(called).toEqual(["journal"]);
    expect(await c.result("session.clear_halt", {})).toEqual({ cleared: true, halted: false });
    expect(await c.result("session.clear_halt", {})).toEqual({ cleared: false, halted: false });
    expect((await c.result("proposal.submit", { proposal: { ...read, id: "later2" } })).results[0].status).toBe("succeeded");
    expect(called).toEqual(["journal", "read_file"]);
  });

  it("is connection-local: another connection runs, a reconnect starts clear, and an agent cannot clear its latch", async () => {
    const agent = t.track(await TestClient.open(`${t.server.url}?agent_id=halted-bot`, t.server.token));
    await halting(agent);
    expect((await agent.call("session.clear_halt", {})).error).toMatchObject({ code: -32001 });
    expect((await agent.result("proposal.submit", { proposal: read })).results[0].error).toContain("session halted");
    const other = await t.client();
    await other.result("tools.register", [{ name: "read_file" }]);
    other.handle("tools.execute", () => ({ result: "ok" }));
    expect((await other.result("proposal.submit", { proposal: read })).results[0].status).toBe("succeeded");
    const again = t.track(await TestClient.open(`${t.server.url}?agent_id=halted-bot`, t.server.token));
    await again.result("tools.register", [{ name: "read_file" }]);
    again.handle("tools.execute", () => ({ result: "ok" }));
    expect((await again.result("proposal.submit", { proposal: read })).results[0].status).toBe("succeeded");
  });
});
