/**
 * State a proposal's actions write is held like a `state.set` value
 * (issue "one door" §4): over a real WebSocket, with small limits, a
 * proposal whose writes pass the connection's share is rolled back with
 * `budget_exceeded` and writes nothing; what a committed proposal wrote —
 * declared values and values taken from a tool's output alike — counts in
 * the server's bound, so a later `state.set` is refused past it; and
 * overwriting the keys gives their bytes back.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestClient } from "../test/test-client.ts";
import { type RunningServer, startServer } from "./server.ts";

const KIB = 1024;
const VALUE = "s".repeat(150 * KIB);
let carHome: string;
let server: RunningServer;
let client: TestClient;

beforeAll(async () => {
  carHome = await mkdtemp(join(tmpdir(), "car-serve-held-state-"));
  server = await startServer({
    port: 0,
    carHome,
    limits: { maxHeldBytes: 800 * KIB, maxHeldBytesPerConnection: 500 * KIB, maxOutputBytesPerProposal: 10_000 * KIB },
  });
  client = await TestClient.open(server.url, server.token);
  client.handle("tools.execute", () => ({ result: VALUE }));
  await client.result("tools.register", [{ name: "fetch_value" }]);
});
afterAll(async () => {
  client.socket.terminate();
  await server.close({ graceMs: 0 });
  await rm(carHome, { recursive: true, force: true });
});

const write = (id: string, key: string, value: unknown, dependencies: string[] = []) => ({
  id,
  type: "state_write",
  parameters: { key, value },
  dependencies,
});

describe("state written by a proposal", () => {
  it("past the connection's share: rolled back with budget_exceeded, nothing written", async () => {
    const over = await client.call("proposal.submit", {
      proposal: { id: "over", actions: ["k1", "k2", "k3", "k4"].map((key, i) => write(`w${i}`, key, VALUE)) },
    });
    expect(over.error).toMatchObject({ data: { car_code: "budget_exceeded", details: { keys: ["k1", "k2", "k3", "k4"] } } });
    expect(over.error!.message).toContain("--max-held-bytes-per-connection");
    const result = (over.error!.data as { details: { result: { results: { rolled_back?: boolean }[] } } }).details.result;
    expect(result.results.every((r) => r.rolled_back === true)).toBe(true);
    for (const key of ["k1", "k2", "k3", "k4"]) expect(await client.result("state.get", { key })).toBeNull();
  });

  it("committed, counts in the server's bound (declared and referenced values alike) until overwritten", async () => {
    const fits = await client.result("proposal.submit", {
      proposal: {
        id: "fits",
        actions: [write("w1", "k1", VALUE), { id: "f", type: "tool_call", tool: "fetch_value" }, write("w2", "k2", "$f.output", ["f"])],
      },
    });
    expect(fits.results.map((r: { status: string }) => r.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
    expect(await client.result("state.get", { key: "k2" })).toBe(VALUE);
    // 300 KiB held by the proposal's keys: of an 800 KiB bound, three more 150 KiB values fit and a fourth does not.
    const other = await TestClient.open(server.url, server.token);
    try {
      for (const key of ["x1", "x2", "x3"]) await other.result("state.set", { key, value: VALUE });
      const refused = await other.call("state.set", { key: "x4", value: VALUE });
      expect(refused.error).toMatchObject({ data: { car_code: "budget_exceeded" } });
      // A proposal overwriting its keys with small values gives their bytes back.
      const shrink = await client.result("proposal.submit", { proposal: { id: "shrink", actions: [write("s1", "k1", 1), write("s2", "k2", 2)] } });
      expect(shrink.results.map((r: { status: string }) => r.status)).toEqual(["succeeded", "succeeded"]);
      await other.result("state.set", { key: "x4", value: VALUE });
      // And a proposal is refused by the server's bound as state.set is.
      const full = await client.call("proposal.submit", { proposal: { id: "full", actions: [write("w1", "k5", VALUE), write("w2", "k6", VALUE)] } });
      expect(full.error).toMatchObject({ data: { car_code: "budget_exceeded" } });
      expect(full.error!.message).toContain("--max-held-bytes)");
      expect(await client.result("state.get", { key: "k5" })).toBeNull();
    } finally {
      other.socket.terminate();
    }
  });
});
