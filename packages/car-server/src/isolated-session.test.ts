/**
 * `session.isolated.v1` on a durable server: a connection that negotiates it
 * gets its own empty state and event log (what RuntimeBench needs per
 * scenario), touches nothing in the shared database, and cannot use it to
 * slip out of what binds it — operator policy files still apply, an agent
 * connection is refused, and a session that already registered tools stays shared.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { openCarDatabase } from "./car-database.ts";
import type { SqliteStore } from "@car/store-sqlite";
import { type RunningServer, startServer } from "./server.ts";
import { TestClient } from "../test/test-client.ts";

let carHome: string;
let store: SqliteStore;
let server: RunningServer;
const clients: TestClient[] = [];

const ISOLATE = { protocol_version: 3, optional_capabilities: ["session.isolated.v1"] };

beforeEach(async () => {
  carHome = await mkdtemp(join(tmpdir(), "car-serve-isolated-"));
  await mkdir(join(carHome, "policies"));
  await writeFile(join(carHome, "policies", "ops.toml"), 'deny_tool = ["deploy"]\n');
  store = await openCarDatabase(join(carHome, "car.db"), { env: { CAR_HOME: carHome } });
  server = await startServer({ port: 0, carHome, store });
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.socket.terminate();
  await server.close({ graceMs: 0 });
  await store.close();
  await rm(carHome, { recursive: true, force: true });
});

async function client(query = ""): Promise<TestClient> {
  const c = await TestClient.open(`${server.url}${query}`, server.token);
  clients.push(c);
  return c;
}

it("gives the connection an empty state and log of its own, leaving the shared database untouched", async () => {
  const shared = await client();
  await shared.result("proposal.submit", {
    proposal: { id: "p-shared", actions: [{ id: "w", type: "state_write", parameters: { key: "leftover", value: 1 } }] },
  });
  const isolated = await client();
  expect((await isolated.result("server.handshake", ISOLATE)).negotiated_capabilities).toEqual(["session.isolated.v1"]);
  expect(await isolated.result("state.snapshot")).toEqual({});
  expect(await isolated.result("events.count")).toBe(0);
  await isolated.result("proposal.submit", {
    proposal: { id: "p-private", actions: [{ id: "w", type: "state_write", parameters: { key: "mine", value: 2 } }] },
  });
  expect(await isolated.result("state.snapshot")).toEqual({ mine: 2 });
  expect(await shared.result("state.snapshot")).toEqual({ leftover: 1 });
  expect(store.state.snapshot()).toEqual({ leftover: 1 });
  expect(store.events.query({ proposal_id: "p-private" })).toEqual([]);
  // Durable-only methods answer as on a --db :memory: server.
  expect((await isolated.call("events.chain.verify")).error).toMatchObject({ message: expect.stringContaining(":memory:") });
});

it("keeps the operator's policy files in force", async () => {
  const isolated = await client();
  await isolated.result("server.handshake", ISOLATE);
  isolated.handle("tools.execute", () => ({ result: { deployed: true } }));
  await isolated.result("tools.register", [{ name: "deploy" }]);
  const result = await isolated.result("proposal.submit", { proposal: { actions: [{ id: "d", type: "tool_call", tool: "deploy" }] } });
  expect(result.results[0]).toMatchObject({ action_id: "d", status: "rejected" });
});

it("is refused to an agent connection and to a session that already registered tools", async () => {
  const agent = await client("?agent_id=bot");
  expect((await agent.call("server.handshake", ISOLATE)).error).toMatchObject({ code: -32001 });
  expect(await agent.result("state.snapshot")).toEqual({});
  const busy = await client();
  await busy.result("tools.register", [{ name: "t" }]);
  expect((await busy.call("server.handshake", ISOLATE)).error).toMatchObject({
    code: -32602,
    message: expect.stringContaining("before tools or policies are registered"),
  });
});
