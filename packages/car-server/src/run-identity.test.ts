/**
 * Run identity over `car serve` (DECISIONS §20): two proposals with the same
 * id get independent proposal-scoped trace facts, and on a durable store
 * (SQLite, a real PostgreSQL) a second run of an id that is still executing
 * is refused with `duplicate_proposal` (-32033), while a run after it ended
 * goes ahead.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresBinDir, startPostgresCluster, type PostgresCluster } from "@car/test-kit/postgres-cluster";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openServeStore } from "./serve-store.ts";
import { type RunningServer, startServer } from "./server.ts";
import { TestClient } from "../test/test-client.ts";

const installed = postgresBinDir() !== undefined;
if (!installed) console.warn("PostgreSQL is not installed (apt-get install postgresql): skipping duplicate_proposal on PostgreSQL");

let carHome: string;
let cluster: PostgresCluster | undefined;
beforeAll(async () => {
  carHome = await mkdtemp(join(tmpdir(), "car-serve-run-identity-"));
  if (installed) cluster = await startPostgresCluster();
});
afterAll(async () => {
  cluster?.stop();
  await rm(carHome, { recursive: true, force: true });
});

/** A client whose `hold` tool call waits until `release()`; every other tool answers at once. Records the tools called. */
async function holdingClient(server: RunningServer): Promise<{ c: TestClient; calls: string[]; holding: Promise<void>; release(): void }> {
  const c = await TestClient.open(server.url, server.token);
  await c.result("session.init", { client_id: "ids", tools: [{ name: "check" }, { name: "hold" }, { name: "ship" }] });
  const calls: string[] = [];
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let held!: () => void;
  const holding = new Promise<void>((resolve) => {
    held = resolve;
  });
  c.handle("tools.execute", async (p: { tool: string }) => {
    calls.push(p.tool);
    if (p.tool === "hold") {
      held();
      await released;
    }
    return { result: { ok: p.tool } };
  });
  return { c, calls, holding, release };
}

const HOLDING = {
  id: "same",
  actions: [
    { id: "c", type: "tool_call", tool: "check" },
    { id: "h", type: "tool_call", tool: "hold", dependencies: ["c"] },
  ],
};

describe("run identity over car serve", () => {
  it("two proposals with the same id have independent proposal-scoped trace facts", async () => {
    const server = await startServer({ port: 0, carHome });
    const { c, calls, holding, release } = await holdingClient(server);
    try {
      await c.result("policy.register", { name: "checked_first", rule: "trace_rule", trace: { kind: "only_after", tool: "ship", after: "check" } });
      const first = c.result("proposal.submit", { proposal: HOLDING });
      await holding;
      const second = await c.result("proposal.submit", { proposal: { id: "same", actions: [{ id: "s", type: "tool_call", tool: "ship" }] } });
      release();
      expect((await first).results.map((r: { status: string }) => r.status)).toEqual(["succeeded", "succeeded"]);
      expect(second.results[0]).toMatchObject({ status: "rejected", error: expect.stringMatching(/^denied by policy: checked_first: /) });
      expect(calls).not.toContain("ship");
    } finally {
      release();
      await c.close();
      await server.close({ graceMs: 0 });
    }
  }, 30_000);
});

async function refusesDuplicate(db: string): Promise<void> {
  const store = (await openServeStore(db, { CAR_HOME: carHome }))!;
  const server = await startServer({ port: 0, carHome, store });
  const { c, calls, holding, release } = await holdingClient(server);
  const other = await TestClient.open(server.url, server.token);
  try {
    await other.result("session.init", { client_id: "other", tools: [{ name: "ship" }] });
    other.handle("tools.execute", () => ({ result: { ok: "ship" } }));
    const first = c.result("proposal.submit", { proposal: HOLDING });
    await holding;
    const again = { id: "same", actions: [{ id: "s", type: "tool_call", tool: "ship" }] };
    // On the same connection and on another one: the id is executing, so the run is refused before anything of it runs.
    for (const client of [c, other]) {
      const reply = await client.call("proposal.submit", { proposal: again });
      expect(reply.error).toMatchObject({ code: -32033, data: { car_code: "duplicate_proposal", details: { proposal_id: "same" } } });
    }
    expect(calls).not.toContain("ship");
    release();
    expect((await first).results.map((r: { status: string }) => r.status)).toEqual(["succeeded", "succeeded"]);
    // Once the first run ended, the id may run again.
    expect((await other.result("proposal.submit", { proposal: again })).results[0].status).toBe("succeeded");
  } finally {
    release();
    await c.close();
    await other.close();
    await server.close({ graceMs: 0 });
    await store.close?.();
  }
}

describe("a durable store refuses a second run of an executing proposal id", () => {
  it("on SQLite", async () => {
    await refusesDuplicate(join(carHome, "car.db"));
  }, 60_000);

  it.skipIf(!installed)(
    "on PostgreSQL",
    async () => {
      await refusesDuplicate(cluster!.createDatabase("duplicates"));
    },
    60_000,
  );
});
