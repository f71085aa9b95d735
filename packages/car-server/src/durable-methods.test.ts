/**
 * The durable methods in process: `events.retention` on a SQLite file
 * (the retained tail still verifies; the bound holds after later proposals),
 * and the refusal a server without a database (`--db :memory:`) gives them.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openCarDatabase } from "./car-database.ts";
import { type RunningServer, startServer } from "./server.ts";
import { TestClient } from "../test/test-client.ts";

let carHome: string;
let server: RunningServer | undefined;
let closeStore: (() => Promise<void>) | undefined;
const clients: TestClient[] = [];

beforeEach(async () => {
  carHome = await mkdtemp(join(tmpdir(), "car-serve-durable-methods-"));
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.socket.terminate();
  await server?.close({ graceMs: 0 });
  await closeStore?.();
  server = undefined;
  closeStore = undefined;
  await rm(carHome, { recursive: true, force: true });
});

async function open(withDatabase: boolean): Promise<TestClient> {
  if (withDatabase) {
    const store = await openCarDatabase(join(carHome, "car.db"), { env: { CAR_HOME: carHome } });
    closeStore = () => store.close();
    server = await startServer({ port: 0, carHome, store });
  } else server = await startServer({ port: 0, carHome });
  const c = await TestClient.open(server.url, server.token);
  clients.push(c);
  return c;
}

function write(id: string) {
  return { proposal: { id, actions: [{ id: "w", type: "state_write", parameters: { key: id, value: 1 } }] } };
}

describe("events.retention on a SQLite database", () => {
  it("trims to the bound, keeps the rest verifiable, and holds the bound after later proposals", async () => {
    const c = await open(true);
    for (const id of ["p1", "p2", "p3"]) await c.result("proposal.submit", write(id));
    const before = await c.result("events.count");
    expect(before).toBeGreaterThan(3);

    const set = await c.result("events.retention", { policy: { max_events: 3 } });
    expect(set).toEqual({ policy: { max_events: 3 }, removed: before - 3 });
    expect(await c.result("events.count")).toBe(3);
    expect(await c.result("events.chain.verify")).toEqual({ verified: 3 });

    await c.result("proposal.submit", write("p4"));
    expect(await c.result("events.count")).toBe(3);
    expect(await c.result("events.chain.verify")).toEqual({ verified: 3 });
    // State is not the log: every write is still there.
    expect(Object.keys(await c.result("state.snapshot")).sort()).toEqual(["p1", "p2", "p3", "p4"]);
    expect(await c.result("events.retention")).toEqual({ policy: { max_events: 3 } });
  });

  it("rejects a malformed policy", async () => {
    const c = await open(true);
    expect((await c.call("events.retention", { policy: { max_events: -1 } })).error).toMatchObject({ code: -32602 });
  });
});

describe("sessions sharing one SQLite database", () => {
  it("run proposals concurrently without losing a write or breaking the chain", async () => {
    const first = await open(true);
    const others = await Promise.all(Array.from({ length: 19 }, () => TestClient.open(server!.url, server!.token)));
    clients.push(...others);
    const all = [first, ...others];
    const results = await Promise.all(all.map((c, i) => c.result("proposal.submit", write(`s${i}`))));
    expect(results.every((r) => r.results[0].status === "succeeded")).toBe(true);
    // Every session sees every other session's write, and the one log verifies end to end.
    const snapshot = await all[7]!.result("state.snapshot");
    expect(Object.keys(snapshot).sort()).toEqual(all.map((_, i) => `s${i}`).sort());
    const count = await first.result("events.count");
    expect(await all[13]!.result("events.chain.verify")).toEqual({ verified: count });
    const submitted = await first.result("events.query", { kinds: ["proposal_received"] });
    expect(submitted.count).toBe(all.length);
  });
});

describe("operator decisions", () => {
  it("refuses approvals, posture changes and a wider tier from a connection acting for an agent", async () => {
    const operator = await open(true);
    const agent = await TestClient.open(`${server!.url}?agent_id=bot`, server!.token);
    clients.push(agent);
    const subject = { fingerprint: "f".repeat(64), required_tier: "full_access" };
    for (const [method, params] of [
      ["permission.approve", subject],
      ["permission.reject", subject],
      ["agent_permissions.set", { agent_id: "bot", mode: "always_allow" }],
      ["agent_permissions.reset", { agent_id: "bot" }],
      ["permission.set_tier", { tier: "full_access" }],
    ] as const) {
      const reply = await agent.call(method, params);
      expect(reply.error, method).toMatchObject({ code: -32001, data: { car_code: "unauthorized" } });
    }
    // Narrowing its own tier is the agent's to do; the operator's decisions still go through.
    expect(await agent.result("permission.set_tier", { tier: "read_only" })).toEqual({ granted_tier: "read_only" });
    expect(await operator.result("permission.approve", subject)).toMatchObject({ decision: "approved", fingerprint: subject.fingerprint });
    expect(await operator.result("agent_permissions.set", { agent_id: "bot", mode: "deny" })).toBeDefined();
  });
});

describe("without a database (--db :memory:)", () => {
  it("answers the durable methods with storage_error and keeps the connection", async () => {
    const c = await open(false);
    for (const method of ["events.chain.verify", "events.retention", "agent_permissions.get"]) {
      const reply = await c.call(method, {});
      expect(reply.error).toMatchObject({ code: -32050, data: { car_code: "storage_error" } });
      expect(reply.error!.message).toContain(":memory:");
    }
    expect(await c.result("state.keys")).toEqual([]);
  });
});
