/**
 * The held-bytes bound on each route in process, with small limits: a
 * connection's concurrent proposals share its part of the bound, a
 * multi-agent call's answers count until it returns, state values count
 * by key, and whatever a finished call held is given back.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "./server.ts";
import { TestClient } from "../test/test-client.ts";

const KIB = 1024;
let carHome: string;
let server: RunningServer;
const clients: TestClient[] = [];

beforeAll(async () => {
  carHome = await mkdtemp(join(tmpdir(), "car-serve-held-"));
  server = await startServer({
    port: 0,
    carHome,
    limits: { maxHeldBytes: 1_000 * KIB, maxHeldBytesPerConnection: 400 * KIB, maxOutputBytesPerProposal: 10_000 * KIB },
  });
});
afterAll(async () => {
  for (const c of clients) c.socket.terminate();
  await server.close({ graceMs: 0 });
  await rm(carHome, { recursive: true, force: true });
});

async function open(): Promise<TestClient> {
  const c = await TestClient.open(server.url, server.token);
  clients.push(c);
  return c;
}

const OUTPUT = "y".repeat(100 * KIB);

async function outputClient(): Promise<TestClient> {
  const c = await open();
  c.handle("tools.execute", () => ({ result: OUTPUT }));
  await c.result("tools.register", [{ name: "big" }]);
  return c;
}

const proposal = (id: string, n: number) => ({
  proposal: { id, actions: Array.from({ length: n }, (_, i) => ({ id: `a${i}`, type: "tool_call", tool: "big" })) },
});

describe("held bytes", () => {
  it("a proposal whose outputs pass the connection's share aborts with budget_exceeded, and the share is given back", async () => {
    const c = await outputClient();
    const over = await c.result("proposal.submit", proposal("over", 6));
    const errors = over.results.map((r: { error: string | null }) => r.error ?? "").join(" ");
    expect(errors).toContain("budget_exceeded");
    expect(errors).toContain("--max-held-bytes-per-connection");
    // Three outputs fit in 400 KiB; after the failed run nothing is held, so this runs whole.
    const fits = await c.result("proposal.submit", proposal("fits", 3));
    expect(fits.results.map((r: { status: string }) => r.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
  });

  it("concurrent proposals on one connection share its part", async () => {
    const c = await open();
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    c.handle("tools.execute", async (p) => {
      if (p.tool === "hold") await released;
      return { result: p.tool === "big" ? OUTPUT : "ok" };
    });
    await c.result("tools.register", [{ name: "big" }, { name: "hold" }]);
    // Each proposal keeps its two outputs while its last action waits: three of them need 600 KiB of a 400 KiB share.
    const holding = (id: string) => ({
      proposal: {
        id,
        actions: [
          { id: "a", type: "tool_call", tool: "big" },
          { id: "b", type: "tool_call", tool: "big" },
          { id: "h", type: "tool_call", tool: "hold", dependencies: ["a", "b"] },
        ],
      },
    });
    const replies = Promise.all([1, 2, 3].map((i) => c.result("proposal.submit", holding(`p${i}`))));
    await c.waitFor((f) => f.method === "tools.execute" && f.params.tool === "hold");
    release();
    const text = JSON.stringify(await replies);
    expect(text).toContain("budget_exceeded");
    expect(text).toContain("--max-held-bytes-per-connection");
  });

  it("counts a multi-agent call's answers until it returns", async () => {
    const c = await open();
    c.handle("multi.run_agent", (p) => ({ result: { name: p.spec.name, answer: OUTPUT, turns: 1, tool_calls: 0, duration_ms: 1, error: null } }));
    const agent = (name: string) => ({ name, system_prompt: name, tools: [], max_turns: 1, metadata: {} });
    const result = await c.result("multi.swarm", { mode: "parallel", agents: ["a", "b", "c", "d", "e", "f"].map(agent), task: "t" });
    const failed = result.rounds[0].filter((o: { error: string | null }) => o.error !== null);
    expect(failed.length).toBeGreaterThan(0);
    expect(failed[0].error).toContain("--max-held-bytes-per-connection");
    // Given back when the call returned.
    const again = await c.result("multi.swarm", { mode: "parallel", agents: [agent("a")], task: "t" });
    expect(again.rounds[0][0].error).toBeNull();
  });

  it("counts state values by key against the server's bound", async () => {
    const c = await open();
    const value = "s".repeat(300 * KIB);
    await c.result("state.set", { key: "a", value });
    await c.result("state.set", { key: "a", value }); // the same key: counted once
    await c.result("state.set", { key: "b", value });
    await c.result("state.set", { key: "c", value });
    const refused = await c.call("state.set", { key: "d", value });
    expect(refused.error).toMatchObject({ data: { car_code: "budget_exceeded" } });
    expect(refused.error!.message).toContain("--max-held-bytes");
    await c.result("state.set", { key: "a", value: 1 }); // shrinking a key gives its bytes back
    await c.result("state.set", { key: "d", value });
  });
});
