/**
 * Who is gated (DECISIONS §16), through `car serve` itself (`runServe`, a
 * real SQLite file, real WebSocket clients): every session — a connection
 * without an agent id too — starts at the standing tier `sandbox_edit`;
 * `--tier` sets it; no connection raises itself above it, neither with
 * `session.init` nor with `permission.set_tier`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runServe } from "./serve-command.ts";
import { recordingServeIo, TestClient } from "../test/test-client.ts";

let carHome: string;
const stops: (() => Promise<number>)[] = [];
const clients: TestClient[] = [];

beforeEach(async () => {
  carHome = await mkdtemp(join(tmpdir(), "car-serve-tier-"));
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  for (const stop of stops.splice(0)) await stop();
  await rm(carHome, { recursive: true, force: true });
});

/** `car serve --port 0 --db <file> ...args`, and a client factory for it (`?agent_id=` when given one). */
async function serve(...args: string[]): Promise<(agentId?: string) => Promise<TestClient>> {
  const io = recordingServeIo(carHome);
  const done = runServe(["--port", "0", "--db", join(carHome, "car.db"), ...args], io);
  await expect.poll(() => io.out.length + io.err.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(2);
  const url = io.out[0]?.replace("car serve listening on ", "");
  if (url === undefined || !url.startsWith("ws://")) throw new Error(`car serve did not start: ${io.err.join("\n")}`);
  const token = io.out[1]!.replace("auth token: ", "");
  stops.push(() => {
    io.signal("SIGTERM");
    return done;
  });
  return async (agentId) => {
    const c = await TestClient.open(agentId === undefined ? url : `${url}?agent_id=${agentId}`, token);
    clients.push(c);
    return c;
  };
}

const read = { id: "r", type: "tool_call", tool: "read_file", parameters: { path: "a" } };
const write = { id: "w", type: "tool_call", tool: "write_file", parameters: { path: "b" }, dependencies: ["r"] };
const send = { id: "s", type: "tool_call", tool: "send_email", parameters: { to: "ops@example.com" }, dependencies: ["w"] };
const TOOLS = [{ name: "read_file" }, { name: "write_file" }, { name: "send_email" }];

describe("car serve: every session is gated", () => {
  it("gates a connection without an agent id at sandbox_edit: a full_access third action rejects the whole proposal until approved", async () => {
    const client = await serve();
    const c = await client();
    await c.result("session.init", { client_id: "t", tools: TOOLS });
    const called: string[] = [];
    c.handle("tools.execute", (p: { tool: string }) => {
      called.push(p.tool);
      return { result: "ok" };
    });
    expect(await c.result("permission.get_tier")).toEqual({ granted_tier: "sandbox_edit" });
    const proposal = { id: "p", actions: [read, write, send] };
    const blocked = await c.result("proposal.submit", { proposal });
    expect(blocked.results.map((r: { status: string }) => r.status)).toEqual(["rejected", "rejected", "rejected"]);
    expect(called).toEqual([]);
    const fingerprint = /^needs approval: fingerprint ([0-9a-f]{64}) requires full_access, granted sandbox_edit/.exec(blocked.results[2].error)![1]!;
    // Approved (on another connection: the ledger is the database's), the same proposal runs.
    await (await client()).result("permission.approve", { fingerprint, required_tier: "full_access" });
    const ran = await c.result("proposal.submit", { proposal: { ...proposal, id: "p2" } });
    expect(ran.results.map((r: { status: string }) => r.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
    expect(called).toEqual(["read_file", "write_file", "send_email"]);
  }, 60_000);

  it("--tier read_only gates a write; no connection rises above the server's tier, neither by session.init nor by set_tier", async () => {
    const client = await serve("--tier", "read_only");
    const c = await client();
    const raised = await c.call("session.init", { client_id: "t", tools: TOOLS, tier: "sandbox_edit" });
    expect(raised.error).toMatchObject({ code: -32001, data: { car_code: "unauthorized" } });
    expect(raised.error!.message).toContain("above this server's standing tier read_only");
    // Nothing of the refused batch was registered, and the tier is where it was.
    expect(await c.result("tools.list")).toMatchObject({ count: 0 });
    expect(await c.result("permission.get_tier")).toEqual({ granted_tier: "read_only" });
    expect((await c.call("permission.set_tier", { tier: "full_access" })).error).toMatchObject({ code: -32001 });

    await c.result("session.init", { client_id: "t", tools: TOOLS });
    c.handle("tools.execute", () => ({ result: "ok" }));
    const gated = await c.result("proposal.submit", { proposal: { id: "w", actions: [read, write] } });
    expect(gated.results[1].error).toMatch(/^needs approval: fingerprint [0-9a-f]{64} requires sandbox_edit, granted read_only/);
    expect((await c.result("proposal.submit", { proposal: { id: "r", actions: [read] } })).results[0].status).toBe("succeeded");
  }, 60_000);

  it("session.init narrows a tier; only the operator widens it back, never past the server's tier; bad --tier values are usage errors", async () => {
    const client = await serve("--tier", "full_access");
    const agent = await client("bot");
    expect(await agent.result("permission.get_tier")).toEqual({ granted_tier: "full_access" });
    expect(await agent.result("session.init", { client_id: "a", tier: "sandbox_edit" })).toMatchObject({ tools_registered: 0 });
    expect(await agent.result("permission.get_tier")).toEqual({ granted_tier: "sandbox_edit" });
    // An agent cannot widen its own tier back, even within the server's.
    expect((await agent.call("session.init", { tier: "full_access" })).error).toMatchObject({ code: -32001, data: { car_code: "unauthorized" } });
    expect((await agent.call("permission.set_tier", { tier: "full_access" })).error).toMatchObject({ code: -32001 });
    expect(await agent.result("permission.get_tier")).toEqual({ granted_tier: "sandbox_edit" });

    const narrow = await serve();
    const operator = await narrow();
    expect(await operator.result("session.init", { client_id: "o", tier: "read_only" })).toMatchObject({ tools_registered: 0 });
    expect(await operator.result("permission.get_tier")).toEqual({ granted_tier: "read_only" });
    // The operator (no agent id) may widen back up to the server's tier, not beyond.
    expect(await operator.result("permission.set_tier", { tier: "sandbox_edit" })).toEqual({ granted_tier: "sandbox_edit" });
    expect((await operator.call("session.init", { tier: "full_access" })).error).toMatchObject({ code: -32001 });

    const bad = recordingServeIo(carHome);
    expect(await runServe(["--port", "0", "--tier", "root"], bad)).toBe(2);
    expect(bad.err[0]).toContain("--tier must be one of read_only, sandbox_edit, full_access");
  }, 60_000);
});
