/**
 * Cutting the log is an operator act on the record (DECISIONS §24), over a
 * real WebSocket on a real SQLite file: `events.stats`, `events.truncate`
 * and `events.clear` answer in the reference's shape, each cut leaves a
 * signed checkpoint chained to the earlier ones and named by its act (what
 * `car audit verify` prints), the remaining log still verifies, and an
 * agent's connection can do none of it — on SQLite and on a real
 * PostgreSQL cluster. Also `metrics.alerts`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { SqliteStore } from "@car/store-sqlite";
import { postgresBinDir, startPostgresCluster, type PostgresCluster } from "@car/test-kit/postgres-cluster";
import type { DurableRuntimeStore } from "@car/engine";
import { openCarDatabase } from "./car-database.ts";
import { openServeStore } from "./serve-store.ts";
import { type RunningServer, startServer } from "./server.ts";
import { TestClient } from "../test/test-client.ts";

let carHome: string;
let server: RunningServer;
let store: SqliteStore;
const clients: TestClient[] = [];

beforeEach(async () => {
  carHome = await mkdtemp(join(tmpdir(), "car-serve-log-cuts-"));
  store = await openCarDatabase(join(carHome, "car.db"), { env: { CAR_HOME: carHome } });
  server = await startServer({ port: 0, carHome, store });
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.socket.terminate();
  await server.close({ graceMs: 0 });
  await store.close();
  await rm(carHome, { recursive: true, force: true });
});

async function open(agent?: string): Promise<TestClient> {
  const c = await TestClient.open(agent === undefined ? server.url : `${server.url}?agent_id=${agent}`, server.token);
  clients.push(c);
  return c;
}

const write = (id: string) => ({ proposal: { id, actions: [{ id: "w", type: "state_write", parameters: { key: id, value: 1 } }] } });

/**
 * Two agents report $0.25 each; cutting their events out of the log (a
 * truncate, then a clear) leaves `cost_usd` (what the log holds) at 0 but
 * `cumulative_cost_usd` at $0.5, and the budget alert still fired; new spend
 * adds to it.
 */
async function spendOutlivesCuts(c: TestClient): Promise<void> {
  const agent = (name: string) => ({ name, system_prompt: name, tools: [], max_turns: 1, metadata: {} });
  c.handle("multi.run_agent", (p) => ({
    result: {
      name: p.spec.name,
      answer: "ok",
      turns: 1,
      tool_calls: 0,
      duration_ms: 1,
      error: null,
      tokens: { input_tokens: 7, output_tokens: 3, cost_usd: 0.25 },
    },
  }));
  const spend = () => c.result("multi.pipeline", { stages: [agent("s1"), agent("s2")], task: "t" });
  await spend();
  await c.result("proposal.submit", write("later"));
  expect(await c.result("metrics.summary", null)).toMatchObject({ cost_usd: 0.5, cumulative_cost_usd: 0.5 });
  await c.result("events.truncate", { maxEvents: 2 });
  expect(await c.result("metrics.summary", null)).toMatchObject({ cost_usd: 0, cumulative_cost_usd: 0.5 });
  await c.result("events.clear");
  expect(await c.result("metrics.summary", null)).toMatchObject({ total_events: 0, cost_usd: 0, cumulative_cost_usd: 0.5 });
  const { alerts } = await c.result("metrics.alerts", { max_cost_usd: 0.4 });
  expect(alerts.map((a: { kind: string }) => a.kind)).toEqual(["cost_overage"]);
  await spend();
  // A proposal after it: on PostgreSQL the agents' events are written with the next commit.
  await c.result("proposal.submit", write("again"));
  expect(await c.result("metrics.summary", null)).toMatchObject({ cost_usd: 0.5, cumulative_cost_usd: 1 });
}

describe("events.stats / events.truncate / events.clear", () => {
  it("cut the log behind chained checkpoints that name the act, and the rest still verifies", async () => {
    const operator = await open();
    for (const id of ["p1", "p2", "p3"]) await operator.result("proposal.submit", write(id));
    const before = await operator.result("events.count");
    expect(await operator.result("events.stats")).toEqual({ events: before, spans: 0 });

    expect(await operator.result("events.truncate", {})).toEqual({ removedEvents: 0, removedSpans: 0, stats: { events: before, spans: 0 } });
    expect(await operator.result("events.truncate", { maxEvents: 2 })).toEqual({ removedEvents: before - 2, removedSpans: 0, stats: { events: 2, spans: 0 } });
    expect(await operator.result("events.chain.verify")).toEqual({ verified: 2 });

    expect(await operator.result("events.clear")).toEqual({ removed: 2, stats: { events: 0, spans: 0 } });
    await operator.result("proposal.submit", write("p4"));
    const after = await operator.result("events.count");
    expect(await operator.result("events.chain.verify")).toEqual({ verified: after });

    const report = store.verifyChain();
    expect(report.ok).toBe(true);
    if (report.ok)
      expect(report.cuts.map((c) => [c.act, c.removed])).toEqual([
        ["truncate", before - 2],
        ["clear", 2],
      ]);
    const [first, second] = store.checkpoints();
    expect(second!.checkpoint.previous).toBe(first!.signature);
  });

  it("keep cumulative_cost_usd: the spend on removed events is carried in their checkpoints", async () => {
    await spendOutlivesCuts(await open());
    expect(store.checkpoints().map(({ checkpoint }) => checkpoint.cost_usd)).toEqual([0.5, 0]);
  });

  it("are the operator's: an agent's connection is refused and the log is untouched", async () => {
    const operator = await open();
    await operator.result("proposal.submit", write("p1"));
    const agent = await open("bot");
    const count = await operator.result("events.count");
    for (const [method, params] of [
      ["events.truncate", { maxEvents: 0 }],
      ["events.clear", {}],
    ] as const) {
      expect((await agent.call(method, params)).error).toMatchObject({ code: -32001 });
    }
    expect(await operator.result("events.count")).toBe(count);
    expect(store.checkpoints()).toEqual([]);
    expect((await operator.call("events.truncate", { maxEvents: -1 })).error?.code).toBe(-32602);
    expect((await operator.call("events.truncate", { maxEvents: 1.5 })).error?.code).toBe(-32602);
  });
});

const installed = postgresBinDir() !== undefined;
if (!installed) console.warn("PostgreSQL is not installed (apt-get install postgresql): skipping the log cuts on PostgreSQL");

describe.skipIf(!installed)("events.truncate / events.clear on PostgreSQL", () => {
  let cluster: PostgresCluster;
  beforeAll(async () => {
    cluster = await startPostgresCluster();
  });
  afterAll(() => cluster?.stop());

  it("cut the shared log behind chained checkpoints that name the act, and the rest still verifies", async () => {
    const pgStore = (await openServeStore(cluster.createDatabase("log_cuts"), { CAR_HOME: carHome })) as DurableRuntimeStore;
    const pgServer = await startServer({ port: 0, carHome, store: pgStore });
    const operator = await TestClient.open(pgServer.url, pgServer.token);
    try {
      for (const id of ["p1", "p2", "p3"]) await operator.result("proposal.submit", write(id));
      const before = await operator.result("events.count");
      expect(await operator.result("events.truncate", { maxEvents: 2 })).toEqual({
        removedEvents: before - 2,
        removedSpans: 0,
        stats: { events: 2, spans: 0 },
      });
      expect(await operator.result("events.chain.verify")).toEqual({ verified: 2 });
      expect(await operator.result("events.clear")).toEqual({ removed: 2, stats: { events: 0, spans: 0 } });
      await operator.result("proposal.submit", write("p4"));
      expect(await operator.result("events.chain.verify")).toEqual({ verified: await operator.result("events.count") });
      const report = await pgStore.verifyChain();
      expect(report.ok).toBe(true);
      if (report.ok)
        expect(report.cuts.map((c) => [c.act, c.removed])).toEqual([
          ["truncate", before - 2],
          ["clear", 2],
        ]);
      const [first, second] = await pgStore.checkpoints();
      expect(second!.checkpoint.previous).toBe(first!.signature);
      // The spend on cut events is carried by their checkpoints here too.
      await operator.result("events.clear");
      await spendOutlivesCuts(operator);
      expect((await pgStore.checkpoints()).slice(3).map(({ checkpoint }) => checkpoint.cost_usd)).toEqual([0.5, 0]);
    } finally {
      operator.socket.terminate();
      await pgServer.close({ graceMs: 0 });
      await pgStore.close?.();
    }
  }, 60_000);
});

describe("metrics.alerts", () => {
  it("fires error-rate and latency alerts from the log, holding the error rate back below min_actions", async () => {
    const c = await open();
    await c.result("tools.register", [{ name: "flaky" }, { name: "slow" }]);
    c.handle("tools.execute", async (p) => {
      if (p.tool === "flaky") return { error: { code: 1, message: "down" } };
      await new Promise((r) => setTimeout(r, 30));
      return { result: "done" };
    });
    const failing = (id: string) => ({ proposal: { id, actions: [{ id: "a", type: "tool_call", tool: "flaky", failure_behavior: "skip" }] } });
    for (const id of ["f1", "f2"]) await c.result("proposal.submit", failing(id));
    await c.result("proposal.submit", { proposal: { id: "s1", actions: [{ id: "a", type: "tool_call", tool: "slow" }] } });
    const early = await c.result("metrics.alerts", { max_error_rate: 0.5 });
    expect(early.alerts).toEqual([]);
    expect(early.summary.actions_failed + early.summary.actions_succeeded).toBeGreaterThan(0);
    const fired = await c.result("metrics.alerts", { max_error_rate: 0.5, min_actions: 1, max_avg_latency_ms: 5, max_cost_usd: 10 });
    expect(fired.alerts.map((a: any) => a.kind)).toEqual(["error_rate", "latency"]);
    expect(fired.alerts[0]).toMatchObject({ threshold: 0.5, observed: fired.summary.error_rate });
    for (const bad of [{ max_error_rate: 2 }, { min_actions: -1 }, { max_goals_ungrounded: 0 }, { max_cost_usd: "1" }]) {
      expect((await c.call("metrics.alerts", bad)).error?.code).toBe(-32602);
    }
  });
});
