/**
 * A session is an agent, not a socket (DECISIONS §21), over a real
 * WebSocket: `@session` trace rules and tool rate limits key on the agent
 * identity bound at authentication (`?agent_id=`, else the token), so they
 * survive reconnects, are shared by concurrent connections of one agent, do
 * not leak to another agent, and on SQLite survive a server restart.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openServeStore } from "./serve-store.ts";
import { type RunningServer, startServer } from "./server.ts";
import { TestClient } from "../test/test-client.ts";

let carHome: string;
const clients: TestClient[] = [];
beforeAll(async () => {
  carHome = await mkdtemp(join(tmpdir(), "car-serve-agent-session-"));
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await rm(carHome, { recursive: true, force: true });
});

const MAX_TWO = { name: "two_notices", rule: "trace_rule", trace: { kind: "max_calls", tool: "notify", max_calls: 2, scope: "session" } };
const NO_NOTICE_AFTER_LOOKUP = {
  name: "quiet_after_lookup",
  rule: "trace_rule",
  trace: { kind: "never_after", tool: "notify", after: "lookup", scope: "session" },
};

/** A connection for `agent` (none: token only) with `notify` and `lookup` tools and `policies` registered. */
async function connect(
  server: RunningServer,
  agent: string | undefined,
  policies: object[],
  tools: object[] = [{ name: "notify" }, { name: "lookup" }],
): Promise<TestClient> {
  const c = await TestClient.open(agent === undefined ? server.url : `${server.url}?agent_id=${agent}`, server.token);
  clients.push(c);
  await c.result("session.init", { client_id: agent ?? "token-only", tools, policies });
  c.handle("tools.execute", (p: { tool: string }) => ({ result: { ok: p.tool } }));
  return c;
}

async function statusOf(c: TestClient, tool: string): Promise<string> {
  const result = await c.result("proposal.submit", { proposal: { actions: [{ id: "a", type: "tool_call", tool, failure_behavior: "skip" }] } });
  return result.results[0].status;
}

describe("session-scoped rules key on the agent", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ port: 0, carHome });
  });
  afterAll(async () => {
    await server.close({ graceMs: 0 });
  });

  it("max_calls(notify,2)@session holds across 3 reconnects of one agent", async () => {
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) {
      const c = await connect(server, "reconnecting-bot", [MAX_TWO]);
      seen.push(await statusOf(c, "notify"));
      await c.close();
    }
    expect(seen).toEqual(["succeeded", "succeeded", "rejected"]);
  });

  it("max_calls(notify,2)@session is shared by 2 concurrent connections of one agent, and not with another agent", async () => {
    const a = await connect(server, "twin-bot", [MAX_TWO]);
    const b = await connect(server, "twin-bot", [MAX_TWO]);
    const seen = await Promise.all([statusOf(a, "notify"), statusOf(b, "notify"), statusOf(a, "notify"), statusOf(b, "notify")]);
    expect(seen.filter((s) => s === "succeeded")).toHaveLength(2);
    const eve = await connect(server, "eve", [MAX_TWO]);
    expect(await statusOf(eve, "notify")).toBe("succeeded");
  });

  it("a reconnect does not clear never_after@session", async () => {
    const first = await connect(server, "curious-bot", [NO_NOTICE_AFTER_LOOKUP]);
    expect(await statusOf(first, "lookup")).toBe("succeeded");
    await first.close();
    const again = await connect(server, "curious-bot", [NO_NOTICE_AFTER_LOOKUP]);
    expect(await statusOf(again, "notify")).toBe("rejected");
  });

  it("without an agent id, the token is the identity: reconnecting with it keeps the count", async () => {
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) {
      const c = await connect(server, undefined, [MAX_TWO]);
      seen.push(await statusOf(c, "notify"));
      await c.close();
    }
    expect(seen).toEqual(["succeeded", "succeeded", "rejected"]);
  });

  it("a tool's rate limit is the agent's: a reconnect that registers the tool again does not reset its window", async () => {
    const limited = [{ name: "notify", rate_limit: { max_calls: 1, interval_secs: 2 } }];
    const first = await connect(server, "paced-bot", [], limited);
    expect(await statusOf(first, "notify")).toBe("succeeded");
    await first.close();
    const again = await connect(server, "paced-bot", [], limited);
    const started = Date.now();
    expect(await statusOf(again, "notify")).toBe("succeeded");
    // The second call waited for the first to leave the 2 s window.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
  }, 20_000);
});

describe("on SQLite, an agent's session survives a server restart", () => {
  it("max_calls and never_after count what ran before the restart", async () => {
    const db = join(carHome, "agent-session.db");
    const run = async (body: (server: RunningServer) => Promise<void>): Promise<void> => {
      const store = (await openServeStore(db, { CAR_HOME: carHome }))!;
      const server = await startServer({ port: 0, carHome, store });
      try {
        await body(server);
      } finally {
        await Promise.all(clients.splice(0).map((c) => c.close()));
        await server.close({ graceMs: 0 });
        await store.close?.();
      }
    };
    await run(async (server) => {
      const c = await connect(server, "durable-bot", [MAX_TWO]);
      expect(await statusOf(c, "notify")).toBe("succeeded");
      expect(await statusOf(c, "notify")).toBe("succeeded");
      expect(await statusOf(c, "lookup")).toBe("succeeded");
    });
    await run(async (server) => {
      const c = await connect(server, "durable-bot", [MAX_TWO]);
      expect(await statusOf(c, "notify")).toBe("rejected");
      const other = await connect(server, "durable-bot", [NO_NOTICE_AFTER_LOOKUP]);
      expect((await other.result("proposal.submit", { proposal: { actions: [{ id: "n", type: "tool_call", tool: "notify" }] } })).results[0].error).toMatch(
        /quiet_after_lookup/,
      );
      // Another agent starts its own session.
      const fresh = await connect(server, "new-bot", [MAX_TWO]);
      expect(await statusOf(fresh, "notify")).toBe("succeeded");
    });
  }, 60_000);
});
