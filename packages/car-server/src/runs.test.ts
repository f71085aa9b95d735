/**
 * Agent run tracing (`runs.*`) over a real WebSocket against a real server
 * on a real SQLite file (and PostgreSQL where installed): the bracket, the
 * live stream with contiguous cursors, replay identical to the stream,
 * ownership (only the owning agent writes; the owner or the host role
 * reads; an unknown run and someone else's look alike), idempotent start,
 * the Incomplete marker after a producer disconnects, resume and cancel,
 * the proposal recorder, and traces surviving a restart.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { postgresBinDir, startPostgresCluster, type PostgresCluster } from "@car/test-kit/postgres-cluster";
import { openCarDatabase } from "./car-database.ts";
import { openServeStore, type ServeStore } from "./serve-store.ts";
import { type RunningServer, startServer } from "./server.ts";
import { TestClient } from "../test/test-client.ts";

let carHome: string;
let server: RunningServer;
let store: ServeStore;
const clients: TestClient[] = [];

async function boot(): Promise<void> {
  store = await openCarDatabase(join(carHome, "car.db"), { env: { CAR_HOME: carHome } });
  server = await startServer({ port: 0, carHome, store, runs: { graceMs: 50, resumeLeaseMs: 400 } });
}

async function shutdown(): Promise<void> {
  for (const c of clients.splice(0)) c.socket.terminate();
  await server.close({ graceMs: 0 });
  await store.close?.();
}

beforeEach(async () => {
  carHome = await mkdtemp(join(tmpdir(), "car-serve-runs-"));
  await boot();
});
afterEach(async () => {
  await shutdown();
  await rm(carHome, { recursive: true, force: true });
});

/** A connection bound to `agent` through `session.auth { agent_id }` (none: the plain token). */
async function agent(agentId: string | undefined, capabilities: string[] = []): Promise<TestClient> {
  const c = await TestClient.connect(server.url);
  clients.push(c);
  const auth = await c.result("session.auth", { token: server.token, ...(agentId !== undefined ? { agent_id: agentId } : {}) });
  expect(auth).toMatchObject({ ok: true, auth_enabled: true, ...(agentId !== undefined ? { agent_id: agentId } : {}) });
  if (capabilities.length > 0) await c.result("server.handshake", { protocol_version: 3, required_capabilities: capabilities });
  return c;
}

async function host(): Promise<TestClient> {
  const c = await TestClient.connect(server.url);
  clients.push(c);
  expect(await c.result("session.auth", { host_token: server.hostToken })).toEqual({ ok: true, auth_enabled: true, role: "host" });
  return c;
}

const until = async (test: () => Promise<boolean> | boolean, ms = 3000): Promise<void> => {
  const end = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > end) throw new Error("condition not reached");
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe("the run bracket and its live trace", () => {
  it("streams every turn after the subscriber's snapshot with contiguous cursors, and replays exactly what streamed", async () => {
    const alice = await agent("alice");
    const { run_id, agent_id } = await alice.result("runs.start", { intent: "fix the build", agent_name: "Alice" });
    expect(agent_id).toBe("alice");
    expect(run_id).toMatch(/^[0-9a-f-]{36}$/);
    const first = await alice.result("runs.record_turns", {
      run_id,
      turns: [
        { prompt: "look", tool: "read", index: 41 },
        { tool: "grep", output: "x" },
      ],
    });
    expect(first).toEqual({ run_id, base_index: 0, count: 2, ok: true });

    const viewer = await agent("alice");
    const snapshot = await viewer.result("runs.subscribe", { run_id });
    expect(snapshot).toMatchObject({ run_id, agent_id: "alice", cursor: 2, status: "in_progress" });
    expect(snapshot.turns_so_far.map((t: any) => [t.record, t.index, t.tool, t.verifier_verdict])).toEqual([
      ["turn", 0, "read", "not_run"],
      ["turn", 1, "grep", "not_run"],
    ]);

    const model = {
      run_id,
      turn_index: 1,
      assistant_text: "calling test",
      requested_tool_calls: [{ id: "c1", name: "test", arguments: {} }],
      model_id: "m-1",
      token_usage: null,
      duration_ms: 12,
    };
    expect(await alice.result("runs.record_model_turn", model)).toEqual({ run_id, base_index: 2, count: 1, ok: true });
    expect(await alice.result("runs.record_turns", { run_id, turns: [{ tool: "test", output: "ok" }] })).toMatchObject({ base_index: 3, count: 1 });
    await alice.result("runs.complete", {
      run_id,
      outcome: { status: "success", summary: "fixed", evidence: [], metrics: {}, timestamp: "2026-01-01T00:00:00Z" },
    });

    await until(() => viewer.notifications("runs.trace.event").length === 3);
    const events = viewer.notifications("runs.trace.event").map((f) => f.params);
    expect(events.map((e) => [e.record.record, e.cursor, e.status])).toEqual([
      ["model_turn", 3, "in_progress"],
      ["turn", 4, "in_progress"],
      ["ended", 4, "completed"],
    ]);

    const trace = await viewer.result("runs.get_trace", { run_id });
    expect(trace.records.map((r: any) => r.record)).toEqual(["started", "turn", "turn", "model_turn", "turn", "ended"]);
    expect(trace.records[0]).toMatchObject({ intent: "fix the build", agent_name: "Alice", agent_id: "alice" });
    // Replay and live render through one buffer: the streamed records are the stored ones.
    expect(trace.records.slice(3)).toEqual(events.map((e) => e.record));
    expect((await viewer.result("runs.get_trace", { run_id, cursor: 4 })).records.map((r: any) => r.record)).toEqual(["turn", "ended"]);

    const listed = await alice.result("runs.list", { agent_id: "alice" });
    expect(listed.runs).toEqual([
      expect.objectContaining({ run_id, agent_id: "alice", intent: "fix the build", status: "completed", turn_count: 4, ended_at: expect.any(String) }),
    ]);
    expect(await viewer.result("runs.unsubscribe", { run_id })).toEqual({ run_id, removed: true });
    expect(await viewer.result("runs.unsubscribe", { run_id })).toEqual({ run_id, removed: false });
  });

  it("a run reports one outcome; a record after the end is dropped as run_terminal", async () => {
    const alice = await agent("alice");
    const { run_id } = await alice.result("runs.start", { intent: "once" });
    await alice.result("runs.complete", { run_id, outcome: { status: "success" } });
    const again = await alice.call("runs.complete", { run_id, outcome: { status: "success" } });
    expect(again.error).toMatchObject({ code: -32602, message: expect.stringContaining("already ended") });
    expect(await alice.result("runs.record_turns", { run_id, turns: [{ tool: "late" }] })).toEqual({
      run_id,
      base_index: 0,
      count: 0,
      ok: false,
      dropped: "run_terminal",
    });
    expect((await alice.call("runs.complete", { run_id: "nope", outcome: { status: "x" } })).error).toMatchObject({ code: -32040 });
  });

  it("idempotency_key returns the run it opened, for its own agent only", async () => {
    const alice = await agent("alice");
    const a = await alice.result("runs.start", { intent: "nightly", idempotency_key: "occ-2026-01-01" });
    const b = await alice.result("runs.start", { intent: "nightly (retry)", idempotency_key: "occ-2026-01-01" });
    expect([a.run_id, b.run_id]).toEqual(["occ-2026-01-01", "occ-2026-01-01"]);
    expect((await alice.result("runs.list", { agent_id: "alice" })).runs).toHaveLength(1);
    const mallory = await agent("mallory");
    expect((await mallory.call("runs.start", { intent: "hijack", idempotency_key: "occ-2026-01-01" })).error?.code).toBe(-32602);
    expect((await mallory.call("runs.start", { intent: "as alice", agent_id: "alice" })).error?.code).toBe(-32001);
  });
});

describe("who may read and write a run", () => {
  it("only the owning agent records turns; host and strangers get the unknown run's answer", async () => {
    const alice = await agent("alice");
    const { run_id } = await alice.result("runs.start", { intent: "private" });
    const drop = { base_index: 0, count: 0, ok: false, dropped: "run_not_found" };
    for (const other of [await agent("bob"), await agent(undefined), await host()]) {
      expect(await other.result("runs.record_turns", { run_id, turns: [{ tool: "forged" }] })).toEqual({ run_id, ...drop });
      expect(await other.result("runs.record_turns", { run_id: "unknown", turns: [{ tool: "forged" }] })).toEqual({ run_id: "unknown", ...drop });
      const model = { run_id, turn_index: 1, assistant_text: "", requested_tool_calls: [], model_id: "m", token_usage: null, duration_ms: 0 };
      expect(await other.result("runs.record_model_turn", model)).toEqual({ run_id, ...drop });
    }
    expect((await alice.result("runs.get_trace", { run_id })).records).toHaveLength(1);
  });

  it("reads need the owner or the host token; an agent id is not a lookup key", async () => {
    const alice = await agent("alice");
    const { run_id } = await alice.result("runs.start", { intent: "secret plan" });
    await alice.result("runs.record_turns", { run_id, turns: [{ prompt: "the secret" }] });
    for (const stranger of [await agent("bob"), await agent(undefined)]) {
      expect((await stranger.call("runs.list", { agent_id: "alice" })).error?.code).toBe(-32001);
      const trace = await stranger.call("runs.get_trace", { run_id });
      expect(trace.error?.code).toBe(-32001);
      expect(JSON.stringify(trace)).not.toContain("the secret");
      const sub = await stranger.call("runs.subscribe", { run_id });
      const unknown = await stranger.call("runs.subscribe", { run_id: "no-such-run" });
      expect([sub.error?.code, unknown.error?.code]).toEqual([-32040, -32040]);
    }
    const admin = await host();
    expect((await admin.result("runs.list", { agent_id: "alice" })).runs.map((r: any) => r.run_id)).toEqual([run_id]);
    expect((await admin.result("runs.get_trace", { run_id })).records[1].prompt).toBe("the secret");
    expect(await admin.result("runs.get_trace", { run_id: "no-such-run" })).toEqual({ run_id: "no-such-run", not_found: true });
    expect(await (await agent("bob")).result("runs.list", { agent_id: "bob" })).toEqual({ agent_id: "bob", runs: [] });
  });

  it("the host token is read from its 0600 file; a wrong one is a token mismatch and grants nothing", async () => {
    const file = join(carHome, "host-token");
    expect((await readFile(file, "utf8")).trim()).toBe(server.hostToken);
    const c = await TestClient.connect(server.url);
    clients.push(c);
    expect((await c.call("session.auth", { host_token: server.token })).error).toMatchObject({ code: -32603, message: "auth failed: token mismatch" });
    expect((await c.call("session.auth", { host_token: server.hostToken, agent_id: "alice" })).error?.code).toBe(-32602);
  });
});

describe("session.auth { agent_id } binds the connection to the agent", () => {
  it("acts as ?agent_id= does: an agent role, refused operator acts, its own postures", async () => {
    const alice = await agent("alice");
    expect((await alice.result("capabilities.list", {})).caller_role).toBe("agent");
    expect((await alice.call("permission.approve", { fingerprint: "f", required_tier: "read_only" })).error?.code).toBe(-32001);
    expect((await (await agent(undefined)).result("capabilities.list", {})).caller_role).toBe("operator");
  });

  it("refuses a malformed agent id, a second agent, and a binding after the session holds tools", async () => {
    const c = await TestClient.connect(server.url);
    clients.push(c);
    expect((await c.call("session.auth", { token: server.token, agent_id: "a b" })).error?.code).toBe(-32602);
    await c.result("session.auth", { token: server.token, agent_id: "alice" });
    expect((await c.call("session.auth", { token: server.token, agent_id: "bob" })).error?.code).toBe(-32001);
    const d = await agent(undefined);
    await d.result("tools.register", [{ name: "t" }]);
    expect((await d.call("session.auth", { token: server.token, agent_id: "bob" })).error?.code).toBe(-32602);
  });

  it("checks its params by the declaration in @car/client/protocol, naming the field, and binds nothing on a refusal", async () => {
    const c = await TestClient.connect(server.url);
    clients.push(c);
    const cases: [unknown, string][] = [
      [{ token: 5 }, "invalid params: token must be a string"],
      [{ token: server.token, agent_id: 7 }, "invalid params: agent_id must be a string"],
      [{ token: server.token, agent_id: "x".repeat(129) }, "invalid params: agent_id"],
      [{ token: server.token, agent_id: "a/b" }, "invalid params: agent_id"],
      [{ host_token: ["t"] }, "invalid params: host_token must be a string"],
      [[server.token], "invalid params: expected an object"],
    ];
    for (const [params, message] of cases) {
      const refused = await c.call("session.auth", params);
      expect(refused.error, JSON.stringify(params)).toMatchObject({ code: -32602, data: { car_code: "invalid_params" } });
      expect(refused.error!.message, JSON.stringify(params)).toContain(message);
    }
    // None of them authenticated or bound the connection: the first real auth binds the agent it names.
    expect(await c.result("session.auth", { token: server.token, agent_id: "carol" })).toEqual({ ok: true, auth_enabled: true, agent_id: "carol" });
    expect((await c.result("capabilities.list", {})).caller_role).toBe("agent");
  });
});

describe("a producer that disconnects", () => {
  it("leaves an Incomplete marker after the grace, streamed to subscribers; a completed run stays completed", async () => {
    const producer = await agent("alice");
    const { run_id } = await producer.result("runs.start", { intent: "crashy" });
    await producer.result("runs.record_turns", { run_id, turns: [{ tool: "step" }] });
    const done = await producer.result("runs.start", { intent: "tidy" });
    await producer.result("runs.complete", { run_id: done.run_id, outcome: { status: "success" } });
    const viewer = await agent("alice");
    await viewer.result("runs.subscribe", { run_id });
    await producer.close();
    const ended = await viewer.waitFor((f) => f.method === "runs.trace.event" && f.params.record.record === "ended");
    expect(ended.params).toMatchObject({ run_id, cursor: 1, status: "incomplete", record: { termination: "incomplete" } });
    const runs = (await viewer.result("runs.list", { agent_id: "alice" })).runs;
    expect(Object.fromEntries(runs.map((r: any) => [r.intent, r.status]))).toEqual({ crashy: "incomplete", tidy: "completed" });
  });

  it("runs.resume (runs.resume.v1) lets the owner reclaim within the lease; a stranger, a live run and an ended one are refused", async () => {
    const first = await agent("alice", ["runs.resume.v1"]);
    const { run_id } = await first.result("runs.start", { intent: "long job" });
    const rival = await agent("alice", ["runs.resume.v1"]);
    expect((await rival.call("runs.resume", { run_id })).error?.message).toContain("live producer");
    const plain = await agent("alice");
    expect((await plain.call("runs.resume", { run_id })).error?.code).toBe(-32008);
    expect((await rival.call("runs.resume", { run_id, client_id: "x" })).error?.code).toBe(-32602);
    await first.close();
    const bob = await agent("bob", ["runs.resume.v1"]);
    expect((await bob.call("runs.resume", { run_id })).error?.code).toBe(-32040);
  });
});

describe("runs.resume reclaims an orphan", () => {
  it("answers with both client ids and keeps the run in progress past the lease", async () => {
    const first = await agent("alice", ["runs.resume.v1"]);
    const firstId = (await first.result("session.init", {})).session_id;
    const { run_id } = await first.result("runs.start", { intent: "long job" });
    await first.close();
    await new Promise((r) => setTimeout(r, 100));
    const second = await agent("alice", ["runs.resume.v1"]);
    const secondId = (await second.result("session.init", {})).session_id;
    expect(await second.result("runs.resume", { run_id })).toEqual({ run_id, agent_id: "alice", client_id: secondId, resumed_from_client_id: firstId });
    await new Promise((r) => setTimeout(r, 500));
    expect(await second.result("runs.record_turns", { run_id, turns: [{ tool: "after resume" }] })).toMatchObject({ ok: true, base_index: 0 });
    await second.result("runs.complete", { run_id, outcome: { status: "success" } });
    expect((await second.call("runs.resume", { run_id })).error?.message).toContain("already ended");
  });
});

describe("runs.cancel (runs.cancel.v1)", () => {
  it("stops a live run with a deterministic receipt; a same-key retry repeats it; a later key is already_terminal", async () => {
    const alice = await agent("alice", ["runs.cancel.v1"]);
    const { run_id } = await alice.result("runs.start", { intent: "stop me" });
    const receipt = await alice.result("runs.cancel", { run_id, idempotency_key: "k1", reason: "user pressed stop" });
    expect(receipt).toMatchObject({
      receipt_version: 1,
      run_id,
      idempotency_key: "k1",
      principal: "agent:alice",
      status: "cancelled_confirmed",
      action_id: null,
      request_id: null,
    });
    expect(receipt.reason_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(receipt.terminal_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(await alice.result("runs.cancel", { run_id, idempotency_key: "k1", reason: "user pressed stop" })).toEqual(receipt);
    const later = await alice.result("runs.cancel", { run_id, idempotency_key: "k2", reason: "again" });
    expect(later).toMatchObject({ status: "already_terminal", terminal_digest: receipt.terminal_digest });
    expect(later.receipt_digest).not.toBe(receipt.receipt_digest);
    expect((await alice.result("runs.list", { agent_id: "alice" })).runs[0].status).toBe("cancelled");
    expect(await alice.result("runs.record_turns", { run_id, turns: [{ tool: "x" }] })).toMatchObject({ dropped: "run_terminal" });
    const trace = await alice.result("runs.get_trace", { run_id });
    expect(trace.records.filter((r: any) => r.record === "ended")).toHaveLength(1);
  });

  it("an orphan only the host may close (Incomplete, already_terminal); the owner is told control is unavailable; strangers see not found", async () => {
    await shutdown();
    store = await openCarDatabase(join(carHome, "car.db"), { env: { CAR_HOME: carHome } });
    server = await startServer({ port: 0, carHome, store, runs: { graceMs: 60_000 } });
    const producer = await agent("alice");
    const { run_id } = await producer.result("runs.start", { intent: "orphan" });
    await producer.close();
    const owner = await agent("alice", ["runs.cancel.v1"]);
    expect((await owner.call("runs.cancel", { run_id, idempotency_key: "k", reason: "r" })).error?.message).toContain(
      "run cancellation control is unavailable",
    );
    const bob = await agent("bob", ["runs.cancel.v1"]);
    expect((await bob.call("runs.cancel", { run_id, idempotency_key: "k", reason: "r" })).error?.code).toBe(-32040);
    const admin = await host();
    await admin.result("server.handshake", { protocol_version: 3, required_capabilities: ["runs.cancel.v1"] });
    const receipt = await admin.result("runs.cancel", { run_id, idempotency_key: "k", reason: "r" });
    expect(receipt).toMatchObject({ principal: "host", status: "already_terminal" });
    expect(await admin.result("runs.cancel", { run_id, idempotency_key: "k", reason: "r" })).toEqual(receipt);
    expect((await admin.result("runs.list", { agent_id: "alice" })).runs[0].status).toBe("incomplete");
    expect((await admin.call("runs.cancel", { run_id, idempotency_key: "k", reason: "r", extra: 1 })).error?.code).toBe(-32602);
  });
});

describe("turn validation and the daemon's size bounds", () => {
  it("refuses malformed batches with the documented message, truncates long fields, drops an oversized turn and a batch past the ceiling", async () => {
    const alice = await agent("alice");
    const { run_id } = await alice.result("runs.start", { intent: "bounds" });
    for (const bad of [
      { run_id, turns: [] },
      { run_id, turns: [1] },
      { run_id: "", turns: [{}] },
      { run_id, turns: [{ prompt: 5 }] },
      { run_id, turns: [{ nonsense: 1 }] },
      { run_id, turns: Array(257).fill({}) },
    ]) {
      const reply = await alice.call("runs.record_turns", bad);
      expect(reply.error).toMatchObject({ code: -32602, message: expect.stringContaining("runs.record_turns requires { run_id, turns: [RunTurn] }") });
    }
    const long = "x".repeat(40_000);
    await alice.result("runs.record_turns", { run_id, turns: [{ prompt: long, output: { nested: long } }] });
    const [, turn] = (await alice.result("runs.get_trace", { run_id })).records;
    expect(turn.prompt.endsWith("…[truncated]")).toBe(true);
    expect(Buffer.byteLength(turn.prompt)).toBeLessThan(17_000);
    expect(turn.output.nested.endsWith("…[truncated]")).toBe(true);
    // Many sub-cap strings: the free-form fields are replaced; a huge cli_outcome cannot be, so the batch is dropped whole.
    const many = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, "y".repeat(15_000)]));
    await alice.result("runs.record_turns", { run_id, turns: [{ tool: "wide", parameters: many }] });
    const wide = (await alice.result("runs.get_trace", { run_id, cursor: 2 })).records[0];
    expect(wide).toMatchObject({ tool: "wide", parameters: "…[truncated: turn exceeded 256 KiB]" });
    expect(await alice.result("runs.record_turns", { run_id, turns: [{ tool: "ok" }, { cli_outcome: many }] })).toMatchObject({
      ok: false,
      dropped: "turn_too_large",
    });
    const batch = Array.from({ length: 256 }, () => ({ tool: "loop" }));
    for (let i = 0; i < 7; i++) expect((await alice.result("runs.record_turns", { run_id, turns: batch })).ok).toBe(true);
    expect(await alice.result("runs.record_turns", { run_id, turns: batch })).toMatchObject({ ok: false, dropped: "run_turn_limit" });
    expect((await alice.result("runs.list", { agent_id: "alice" })).runs[0].turn_count).toBe(2 + 7 * 256);
  });

  it("redacts credentials from model turns before they are stored", async () => {
    const alice = await agent("alice");
    const { run_id } = await alice.result("runs.start", { intent: "redact" });
    const key = `sk-ant-${"a".repeat(30)}`;
    await alice.result("runs.record_model_turn", {
      run_id,
      turn_index: 1,
      assistant_text: `using ${key}`,
      requested_tool_calls: [{ id: "c", name: "http", arguments: { header: `Bearer ${"b".repeat(40)}` } }],
      model_id: "m",
      token_usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
      duration_ms: 5,
    });
    const stored = (await alice.result("runs.get_trace", { run_id })).records[1];
    expect(JSON.stringify(stored)).not.toContain(key);
    expect(stored).toMatchObject({
      record: "model_turn",
      index: 0,
      assistant_text: "using [redacted]",
      requested_tool_calls: [{ arguments: { header: "[redacted]" } }],
    });
    const bad = await alice.call("runs.record_model_turn", {
      run_id,
      turn_index: 0,
      assistant_text: "",
      requested_tool_calls: [],
      model_id: "m",
      token_usage: null,
      duration_ms: 1,
    });
    expect(bad.error?.code).toBe(-32602);
  });
});

describe("the proposal recorder", () => {
  it("records a proposal's tool calls as the current run's turns, with the session_id its tools.execute carried", async () => {
    const alice = await agent("alice");
    await alice.result("tools.register", [{ name: "lookup" }]);
    const seen: string[] = [];
    alice.handle("tools.execute", (p) => {
      seen.push(p.session_id);
      return { result: { found: p.params.q } };
    });
    const { run_id } = await alice.result("runs.start", { intent: "look something up" });
    await alice.result("proposal.submit", { proposal: { id: "p1", actions: [{ id: "a", type: "tool_call", tool: "lookup", parameters: { q: "car" } }] } });
    const records = (await alice.result("runs.get_trace", { run_id })).records;
    expect(records[1]).toMatchObject({
      record: "turn",
      index: 0,
      tool: "lookup",
      parameters: { q: "car" },
      output: { found: "car" },
      proposal_id: "p1",
      action_id: "a",
      session_id: seen[0],
    });
    expect(records[0].client_id).toBe(seen[0]);
  });
});

describe("traces live in the database", () => {
  it("a completed trace replays after a server restart on the same SQLite file", async () => {
    const alice = await agent("alice");
    const { run_id } = await alice.result("runs.start", { intent: "durable" });
    await alice.result("runs.record_turns", { run_id, turns: [{ tool: "a" }, { tool: "b" }] });
    await alice.result("runs.complete", { run_id, outcome: { status: "success" } });
    const before = (await alice.result("runs.get_trace", { run_id })).records;
    await shutdown();
    await boot();
    const again = await agent("alice");
    expect((await again.result("runs.get_trace", { run_id })).records).toEqual(before);
  });
});

/**
 * runs.pagination.v1 against whatever store the server runs on: pages in one
 * stable order (a run opened meanwhile does not shift them), the strict
 * shapes once negotiated, the legacy ones refusing `limit` otherwise, and a
 * cursor the server did not issue a typed -32602.
 */
async function paginationScenario(): Promise<void> {
  const alice = await agent("alice", ["runs.pagination.v1"]);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push((await alice.result("runs.start", { intent: `run ${i}` })).run_id);
  await alice.result("runs.record_turns", { run_id: ids[0], turns: [1, 2, 3, 4, 5].map((n) => ({ tool: `t${n}` })) });
  const seen: string[] = [];
  let cursor = "";
  for (let page = 0; ; page++) {
    const answer = await alice.result("runs.list", { agent_id: "alice", cursor, limit: 2 });
    expect(answer.runs.length).toBeLessThanOrEqual(2);
    seen.push(...answer.runs.map((r: any) => r.run_id));
    // A run opened after the first page sorts before it: it never shifts or repeats a later page.
    if (page === 0) await alice.result("runs.start", { intent: "late" });
    if (answer.next_cursor === null) break;
    expect(typeof answer.next_cursor).toBe("string");
    cursor = answer.next_cursor;
  }
  expect(new Set(seen).size).toBe(5);
  expect(seen.sort()).toEqual([...ids].sort());
  // The whole list in one page is the same order, newest first, with the late run at the head.
  const all = (await alice.result("runs.list", { agent_id: "alice", cursor: "", limit: 500 })).runs;
  expect(all).toHaveLength(6);
  expect(all[0].intent).toBe("late");
  for (let i = 1; i < all.length; i++) expect(all[i - 1].started_at >= all[i].started_at).toBe(true);

  const refused: [unknown, string][] = [
    [{ agent_id: "alice", limit: 2 }, "requires cursor"],
    [{ agent_id: "alice", cursor: "" }, "requires limit"],
    [{ agent_id: "alice", cursor: "", limit: 0 }, "limit"],
    [{ agent_id: "alice", cursor: "", limit: 501 }, "limit"],
    [{ agent_id: "alice", cursor: "not-a-cursor", limit: 2 }, "cursor is not one runs.list issued"],
    [{ agent_id: "alice", cursor: Buffer.from('["yesterday","x"]').toString("base64url"), limit: 2 }, "cursor is not one runs.list issued"],
    [{ agent_id: "alice", cursor: "!!", limit: 2 }, "cursor is not one runs.list issued"],
    [{ agent_id: "alice", cursor: 3, limit: 2 }, "cursor must be a string"],
    [{ agent_id: "alice", cursor: "", limit: 2, offset: 4 }, "unknown field 'offset'"],
  ];
  for (const [params, message] of refused) {
    const reply = await alice.call("runs.list", params);
    expect(reply.error, JSON.stringify(params)).toMatchObject({ code: -32602, data: { car_code: "invalid_params" } });
    expect(reply.error!.message, JSON.stringify(params)).toContain(message);
  }
  // The cursor is an authorization-neutral position: another agent still cannot list alice's runs with it.
  expect((await (await agent("bob", ["runs.pagination.v1"])).call("runs.list", { agent_id: "alice", cursor: "", limit: 5 })).error?.code).toBe(-32001);

  // get_trace and subscribe take the strict shapes too, and page the records.
  const run_id = ids[0];
  const first = await alice.result("runs.get_trace", { run_id, cursor: 0, limit: 4 });
  expect(first.records.map((r: any) => r.record)).toEqual(["started", "turn", "turn", "turn"]);
  expect(first.next_cursor).toBe(4);
  const rest = await alice.result("runs.get_trace", { run_id, cursor: 4, limit: 4 });
  expect(rest.records.map((r: any) => r.tool)).toEqual(["t4", "t5"]);
  expect(rest.next_cursor).toBeNull();
  expect((await alice.call("runs.get_trace", { run_id, limit: 4 })).error?.message).toContain("requires cursor");
  const sub = await alice.result("runs.subscribe", { run_id, cursor: 1, limit: 2 });
  expect(sub).toMatchObject({ cursor: 5, next_cursor: 3 });
  expect(sub.turns_so_far.map((t: any) => t.tool)).toEqual(["t2", "t3"]);
  expect((await alice.call("runs.subscribe", { run_id })).error?.message).toContain("requires cursor");

  // Without the capability: the legacy shapes, and a limit is refused rather than ignored.
  const legacy = await agent("alice");
  expect((await legacy.result("runs.list", { agent_id: "alice" })).runs).toHaveLength(6);
  for (const [method, params] of [
    ["runs.list", { agent_id: "alice", limit: 2 }],
    ["runs.get_trace", { run_id, limit: 2 }],
    ["runs.subscribe", { run_id, cursor: 0 }],
  ] as const) {
    const reply = await legacy.call(method, params);
    expect(reply.error, method).toMatchObject({ code: -32602 });
    expect(reply.error!.message, method).toContain("needs runs.pagination.v1");
  }
}

describe("runs.pagination.v1", () => {
  it("pages runs.list, runs.get_trace and runs.subscribe on SQLite", paginationScenario);

  it("pages on the in-memory run store", async () => {
    await shutdown();
    server = await startServer({ port: 0, carHome, runs: { graceMs: 50 } });
    store = { close: async () => {} } as unknown as ServeStore;
    await paginationScenario();
  });
});

const pgInstalled = postgresBinDir() !== undefined;
if (!pgInstalled) console.warn("PostgreSQL is not installed (apt-get install postgresql): skipping runs.* on PostgreSQL");

describe.skipIf(!pgInstalled)("runs.* on PostgreSQL", () => {
  let cluster: PostgresCluster;
  beforeAll(async () => {
    cluster = await startPostgresCluster();
  });
  afterAll(() => cluster?.stop());

  it("streams, replays and survives a restart of the server", async () => {
    const url = cluster.createDatabase("runs_server");
    await shutdown();
    const open = async () => {
      store = (await openServeStore(url, { CAR_HOME: carHome }))!;
      server = await startServer({ port: 0, carHome, store, runs: { graceMs: 50 } });
    };
    await open();
    const alice = await agent("alice");
    const { run_id } = await alice.result("runs.start", { intent: "pg" });
    const viewer = await agent("alice");
    await viewer.result("runs.subscribe", { run_id });
    await Promise.all([0, 1, 2].map((i) => alice.result("runs.record_turns", { run_id, turns: [{ tool: `t${i}` }, { tool: `t${i}` }] })));
    await until(() => viewer.notifications("runs.trace.event").length === 6);
    expect(viewer.notifications("runs.trace.event").map((f) => f.params.cursor)).toEqual([1, 2, 3, 4, 5, 6]);
    await alice.close();
    await viewer.waitFor((f) => f.method === "runs.trace.event" && f.params.status === "incomplete");
    const before = (await viewer.result("runs.get_trace", { run_id })).records;
    expect(before.map((r: any) => r.record)).toEqual(["started", "turn", "turn", "turn", "turn", "turn", "turn", "ended"]);
    await shutdown();
    await open();
    expect((await (await agent("alice")).result("runs.get_trace", { run_id })).records).toEqual(before);
  });

  it("pages runs.list, runs.get_trace and runs.subscribe (runs.pagination.v1)", async () => {
    const url = cluster.createDatabase("runs_pages");
    await shutdown();
    store = (await openServeStore(url, { CAR_HOME: carHome }))!;
    server = await startServer({ port: 0, carHome, store, runs: { graceMs: 50 } });
    await paginationScenario();
  });
});
