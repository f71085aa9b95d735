/**
 * `proposal.submit` on a commit the store refuses for a conflict: a JSON-RPC
 * error with the conflict's code (-32030 stale_read) and the same message
 * `car run` prints, on SQLite and on a real PostgreSQL (strict mode), with
 * the rolled-back result beside it. The proposal reads `k` and waits in its
 * tool while another runtime on the same database (another process, in
 * practice) commits a write to `k`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Runtime } from "@car/engine";
import { postgresBinDir, startPostgresCluster, type PostgresCluster } from "@car/test-kit/postgres-cluster";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openServeStore } from "./serve-store.ts";
import { startServer } from "./server.ts";
import { TestClient } from "../test/test-client.ts";

const installed = postgresBinDir() !== undefined;
if (!installed) console.warn("PostgreSQL is not installed (apt-get install postgresql): skipping proposal.submit's refused commit on PostgreSQL");

let carHome: string;
let cluster: PostgresCluster | undefined;
beforeAll(async () => {
  carHome = await mkdtemp(join(tmpdir(), "car-serve-refused-"));
  if (installed) cluster = await startPostgresCluster();
});
afterAll(async () => {
  cluster?.stop();
  await rm(carHome, { recursive: true, force: true });
});

const MESSAGE = "commit refused: state the proposal read changed before it committed: k — every change was rolled back (stale_read)";

async function refusedOver(db: string): Promise<void> {
  const store = (await openServeStore(db, { CAR_HOME: carHome }))!;
  const other = new Runtime({ store: (await openServeStore(db, { CAR_HOME: carHome }))! });
  const server = await startServer({ port: 0, carHome, store });
  const a = await TestClient.open(server.url, server.token);
  try {
    await a.result("session.init", { client_id: "a", tools: [{ name: "slow_inc" }] });
    await a.result("state.set", { key: "k", value: 1 });
    a.handle("tools.execute", async (p: { params: { n: number } }) => {
      await other.executeProposal({ actions: [{ id: "w", type: "state_write", parameters: { key: "k", value: 10 } }] });
      return { result: p.params.n + 1 };
    });
    const reply = await a.call("proposal.submit", {
      proposal: {
        id: "inc",
        actions: [
          { id: "r", type: "state_read", parameters: { key: "k" } },
          { id: "i", type: "tool_call", tool: "slow_inc", parameters: { n: "$r.output" }, dependencies: ["r"] },
          { id: "w", type: "state_write", parameters: { key: "k", value: "$i.output" }, dependencies: ["i"] },
        ],
      },
    });
    expect(reply.error).toMatchObject({ code: -32030, message: MESSAGE, data: { car_code: "stale_read", details: { keys: ["k"] } } });
    const result = (reply.error!.data as { details: { result: { results: { rolled_back?: boolean }[] } } }).details.result;
    expect(result.results.map((r) => r.rolled_back === true)).toEqual([true, true, true]);
    expect(await a.result("state.get", { key: "k" })).toBe(10);
    // A later run of the same proposal id that commits is not reported as refused.
    a.handle("tools.execute", (p: { params: { n: number } }) => ({ result: p.params.n + 1 }));
    const again = await a.call("proposal.submit", {
      proposal: { id: "inc", actions: [{ id: "w", type: "state_write", parameters: { key: "k", value: 11 } }] },
    });
    expect(again.error).toBeUndefined();
  } finally {
    await a.close();
    await other.close();
    await server.close({ graceMs: 0 });
    await store.close?.();
  }
}

describe("proposal.submit on a refused commit", () => {
  it("answers with stale_read (-32030) and car run's message on SQLite", async () => {
    await refusedOver(join(carHome, "car.db"));
  }, 60_000);

  it.skipIf(!installed)(
    "answers with stale_read (-32030) and car run's message on PostgreSQL",
    async () => {
      await refusedOver(cluster!.createDatabase("refused"));
    },
    60_000,
  );
});
