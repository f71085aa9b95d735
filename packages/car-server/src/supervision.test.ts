/**
 * `supervision.*` over a real WebSocket (reference websocket-core.md
 * § supervision): an operator connection subscribes, proposals on other
 * connections that match its filter are parked at admission until it
 * decides; intents are trimmed (key names and a digest, never a value);
 * the gate fails closed (timeout, supervisor disconnect); `allow` is no
 * bypass; `escalate` hands the proposal to the approval ledger; agent
 * connections can neither supervise nor decide.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "./server.ts";
import { TestClient } from "../test/test-client.ts";

const SECRET = "s3cr3t-value-never-shown";
const TOOLS = [{ name: "read_file" }, { name: "write_file" }, { name: "send_email" }, { name: "deploy" }];

let carHome: string;
/** A patient server (10 s decisions) and an impatient one (400 ms) for the fail-closed cases. */
let server: RunningServer;
let quick: RunningServer;
const clients: TestClient[] = [];

beforeAll(async () => {
  carHome = await mkdtemp(join(tmpdir(), "car-serve-supervision-"));
  server = await startServer({ port: 0, carHome, decisionTimeoutMs: 10_000 });
  quick = await startServer({ port: 0, carHome, decisionTimeoutMs: 400, writeTokenFile: false, limits: { maxHeldBytesPerConnection: 64 * 1024 } });
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await server.close({ graceMs: 0 });
  await quick.close({ graceMs: 0 });
  await rm(carHome, { recursive: true, force: true });
});

async function open(on: RunningServer = server, agentId?: string): Promise<TestClient> {
  const c = await TestClient.open(agentId === undefined ? on.url : `${on.url}?agent_id=${agentId}`, on.token);
  clients.push(c);
  return c;
}

/** A connection that runs proposals: its tools answer "ok" and are recorded in `called`. */
async function submitter(on: RunningServer = server, agentId?: string): Promise<{ c: TestClient; called: string[]; session: string }> {
  const c = await open(on, agentId);
  const { session_id } = await c.result("session.init", { client_id: "sub", tools: TOOLS });
  const called: string[] = [];
  c.handle("tools.execute", (p: { tool: string }) => {
    called.push(p.tool);
    return { result: "ok" };
  });
  return { c, called, session: session_id };
}

const read = (id = "r") => ({ id, type: "tool_call", tool: "read_file", parameters: { path: "/tmp/a", note: SECRET } });
const send = { id: "s", type: "tool_call", tool: "send_email", parameters: { to: "ops@example.com" } };

function statuses(result: { results: { status: string }[] }): string[] {
  return result.results.map((r) => r.status);
}

async function nextIntent(supervisor: TestClient, seen: number): Promise<any> {
  await expect.poll(() => supervisor.notifications("supervision.intent").length, { timeout: 5_000 }).toBeGreaterThan(seen);
  return supervisor.notifications("supervision.intent")[seen].params;
}

describe("supervision.subscribe and the parked proposal", () => {
  it("parks a matching proposal until allow; the intent carries key names and a digest, never a value; both ends are audit events", async () => {
    const sup = await open();
    const sub = await submitter();
    const subscribed = await sup.result("supervision.subscribe", { filter: { sessions: [sub.session] } });
    expect(subscribed).toMatchObject({ subscribed: true, decision_timeout_ms: 10_000 });
    expect(subscribed.supervisors).toBeGreaterThanOrEqual(1);

    const submitted = sub.c.result("proposal.submit", { proposal: { id: "watched", actions: [read()] } });
    const intent = await nextIntent(sup, 0);
    expect(sub.called).toEqual([]);
    expect(intent).toMatchObject({
      proposal_id: "watched",
      session_id: sub.session,
      source: expect.stringMatching(/^conn:sess-/),
      reversibility: "reversible",
      actions: [
        {
          id: "r",
          action_type: "tool_call",
          tool: "read_file",
          reversibility: "reversible",
          parameter_keys: ["note", "path"],
          parameters_digest: expect.stringMatching(/^[0-9a-f]{64}$/),
        },
      ],
    });
    expect(JSON.stringify(intent)).not.toContain(SECRET);
    expect(JSON.stringify(intent)).not.toContain("/tmp/a");
    const { intents } = await sup.result("supervision.pending");
    expect(intents.map((i: { id: string }) => i.id)).toContain(intent.id);

    expect(await sup.result("supervision.decide", { intent_id: intent.id, decision: { kind: "allow" } })).toEqual({ decided: true });
    expect(statuses(await submitted)).toEqual(["succeeded"]);
    expect(sub.called).toEqual(["read_file"]);
    expect((await sup.result("supervision.pending")).intents.map((i: { id: string }) => i.id)).not.toContain(intent.id);

    const { events } = await sub.c.result("events.query", { proposal_id: "watched", kinds: ["supervision_parked", "supervision_decided"] });
    const parked = events.find((e: { kind: string }) => e.kind === "supervision_parked");
    const decided = events.find((e: { kind: string }) => e.kind === "supervision_decided");
    expect(parked.data).toMatchObject({ intent_id: intent.id, actions: [{ parameter_keys: ["note", "path"] }] });
    expect(JSON.stringify(parked.data)).not.toContain(SECRET);
    expect(decided.data).toMatchObject({ intent_id: intent.id, decision: "allow", reviewer: expect.stringMatching(/^conn:/) });
    expect(typeof decided.data.wait_ms).toBe("number");
  });

  it("deny rejects the whole proposal with the reason and dispatches nothing", async () => {
    const sup = await open();
    const sub = await submitter();
    await sup.result("supervision.subscribe", { filter: { sessions: [sub.session] } });
    const submitted = sub.c.result("proposal.submit", { proposal: { id: "denied", actions: [read("r1"), { ...read("r2"), dependencies: ["r1"] }] } });
    const intent = await nextIntent(sup, 0);
    await sup.result("supervision.decide", { intent_id: intent.id, decision: { kind: "deny", reason: "not during the freeze" } });
    const result = await submitted;
    expect(statuses(result)).toEqual(["rejected", "rejected"]);
    expect(result.results[0].error).toContain("denied by supervisor: not during the freeze");
    expect(sub.called).toEqual([]);
  });

  it("allow is not a bypass: a full_access action still needs its approval after the supervisor allows", async () => {
    const sup = await open();
    const sub = await submitter();
    await sup.result("supervision.subscribe", { filter: { sessions: [sub.session] } });
    const submitted = sub.c.result("proposal.submit", { proposal: { id: "allowed-but-gated", actions: [send] } });
    const intent = await nextIntent(sup, 0);
    expect(intent.actions[0].tool).toBe("send_email");
    await sup.result("supervision.decide", { intent_id: intent.id, decision: { kind: "allow" } });
    const result = await submitted;
    expect(statuses(result)).toEqual(["rejected"]);
    expect(result.results[0].error).toMatch(/needs approval: fingerprint [0-9a-f]{64} requires full_access/);
    expect(sub.called).toEqual([]);
  });

  it("escalate hands even a read to the approval ledger; with a wait, an approval releases it", async () => {
    const sup = await open();
    const sub = await submitter();
    await sup.result("supervision.subscribe", { filter: { sessions: [sub.session] } });
    const first = sub.c.result("proposal.submit", { proposal: { id: "escalated", actions: [read()] } });
    await sup.result("supervision.decide", { intent_id: (await nextIntent(sup, 0)).id, decision: { kind: "escalate", reason: "a human should look" } });
    const rejected = await first;
    expect(statuses(rejected)).toEqual(["rejected"]);
    expect(rejected.results[0].error).toMatch(
      /needs approval: fingerprint [0-9a-f]{64} requires read_only, granted sandbox_edit \(escalated by a supervisor\)/,
    );

    // Again, waiting for the approval: escalated, it waits in permission.pending until approved (this server keeps a ledger per session).
    const waiting = sub.c.result("proposal.submit", { proposal: { id: "escalated-2", actions: [read()] }, wait_for_approval_ms: 10_000 });
    await sup.result("supervision.decide", { intent_id: (await nextIntent(sup, 1)).id, decision: { kind: "escalate", reason: "a human should look" } });
    await expect.poll(async () => (await sub.c.result("permission.pending")).pending.length, { timeout: 5_000 }).toBe(1);
    const [wait] = (await sub.c.result("permission.pending")).pending;
    expect(wait).toMatchObject({
      tool: "read_file",
      required: "read_only",
      granted: "sandbox_edit",
      parameter_keys: ["note", "path"],
      proposal_id: "escalated-2",
    });
    expect(sub.called).toEqual([]);
    await sub.c.result("permission.approve", { fingerprint: wait.fingerprint, required_tier: "read_only" });
    expect(statuses(await waiting)).toEqual(["succeeded"]);
    expect(sub.called).toEqual(["read_file"]);
  });
});

describe("supervision filters", () => {
  it("tools, sessions and min_reversibility narrow what is parked; re-subscribing replaces the filter; unsubscribe stops parking", async () => {
    const sup = await open();
    const sub = await submitter();
    // A tool the proposal does not call: not parked, it runs at once.
    await sup.result("supervision.subscribe", { filter: { sessions: [sub.session], tools: ["deploy"] } });
    expect(statuses(await sub.c.result("proposal.submit", { proposal: { id: "f1", actions: [read()] } }))).toEqual(["succeeded"]);
    // Irreversible and worse: a reversible read passes.
    await sup.result("supervision.subscribe", { filter: { sessions: [sub.session], min_reversibility: "irreversible" } });
    expect(statuses(await sub.c.result("proposal.submit", { proposal: { id: "f2", actions: [read()] } }))).toEqual(["succeeded"]);
    // An unknown label sorts as most severe: a reversible read passes it too.
    await sup.result("supervision.subscribe", { filter: { sessions: [sub.session], min_reversibility: "catastrophic" } });
    expect(statuses(await sub.c.result("proposal.submit", { proposal: { id: "f3", actions: [read()] } }))).toEqual(["succeeded"]);
    expect(sup.notifications("supervision.intent")).toEqual([]);
    // "reversible and worse" matches the read.
    await sup.result("supervision.subscribe", { filter: { sessions: [sub.session], min_reversibility: "reversible", tools: ["read_file"] } });
    const parked = sub.c.result("proposal.submit", { proposal: { id: "f4", actions: [read()] } });
    await sup.result("supervision.decide", { intent_id: (await nextIntent(sup, 0)).id, decision: { kind: "allow" } });
    expect(statuses(await parked)).toEqual(["succeeded"]);
    expect(await sup.result("supervision.unsubscribe")).toEqual({ subscribed: false, was_subscribed: true });
    expect(await sup.result("supervision.unsubscribe")).toEqual({ subscribed: false, was_subscribed: false });
    expect(statuses(await sub.c.result("proposal.submit", { proposal: { id: "f5", actions: [read()] } }))).toEqual(["succeeded"]);
    expect(sup.notifications("supervision.intent")).toHaveLength(1);
  });

  it("a filter field it does not know is invalid params, not ignored", async () => {
    const sup = await open();
    const bad = await sup.call("supervision.subscribe", { filter: { tool: ["x"] } });
    expect(bad.error).toMatchObject({ code: -32602 });
    expect(bad.error!.message).toContain("filter.tool");
  });
});

describe("supervision.decide errors", () => {
  it("an unknown, decided or malformed decision is an error; reason is required for deny and escalate", async () => {
    const sup = await open();
    const sub = await submitter();
    expect((await sup.call("supervision.decide", { intent_id: "intent-nope", decision: { kind: "allow" } })).error).toMatchObject({ code: -32040 });
    await sup.result("supervision.subscribe", { filter: { sessions: [sub.session] } });
    const submitted = sub.c.result("proposal.submit", { proposal: { id: "d1", actions: [read()] } });
    const intent = await nextIntent(sup, 0);
    expect((await sup.call("supervision.decide", { intent_id: intent.id, decision: { kind: "deny" } })).error).toMatchObject({ code: -32602 });
    expect((await sup.call("supervision.decide", { intent_id: intent.id, decision: { kind: "escalate", reason: " " } })).error).toMatchObject({ code: -32602 });
    expect((await sup.call("supervision.decide", { intent_id: intent.id, decision: { kind: "inject" } })).error).toMatchObject({ code: -32602 });
    expect((await sup.call("supervision.decide", { intent_id: intent.id })).error).toMatchObject({ code: -32602 });
    // Still parked after the bad calls; the first real decision lands, the second is refused.
    await sup.result("supervision.decide", { intent_id: intent.id, decision: { kind: "deny", reason: "no" } });
    const again = await sup.call("supervision.decide", { intent_id: intent.id, decision: { kind: "allow" } });
    expect(again.error).toMatchObject({ code: -32040 });
    expect(again.error!.message).toContain("already decided, timed out, or never existed");
    expect(statuses(await submitted)).toEqual(["rejected"]);
  });

  it("an agent's connection can neither subscribe, list nor decide", async () => {
    const sup = await open();
    const sub = await submitter();
    await sup.result("supervision.subscribe", { filter: { sessions: [sub.session] } });
    const submitted = sub.c.result("proposal.submit", { proposal: { id: "a1", actions: [read()] } });
    const intent = await nextIntent(sup, 0);
    const agent = await open(server, "mallory");
    for (const [method, params] of [
      ["supervision.subscribe", {}],
      ["supervision.pending", {}],
      ["supervision.unsubscribe", {}],
      ["supervision.decide", { intent_id: intent.id, decision: { kind: "allow" } }],
    ] as const) {
      const reply = await agent.call(method, params);
      expect(reply.error, method).toMatchObject({ code: -32001, data: { car_code: "unauthorized" } });
    }
    // The agent's attempt did not land: the intent is still parked and the supervisor's deny does.
    await sup.result("supervision.decide", { intent_id: intent.id, decision: { kind: "deny", reason: "mine to decide" } });
    expect(statuses(await submitted)).toEqual(["rejected"]);
  });
});

describe("fail closed", () => {
  it("an intent nobody answers within the decision timeout is rejected, and deciding it afterwards is an error", async () => {
    const sup = await open(quick);
    const sub = await submitter(quick);
    const subscribed = await sup.result("supervision.subscribe", { filter: { sessions: [sub.session] } });
    expect(subscribed.decision_timeout_ms).toBe(400);
    const result = await sub.c.result("proposal.submit", { proposal: { id: "t1", actions: [read()] } });
    expect(statuses(result)).toEqual(["rejected"]);
    expect(result.results[0].error).toContain("no supervisor decided within 400 ms");
    expect(sub.called).toEqual([]);
    const intent = sup.notifications("supervision.intent")[0].params;
    expect((await sup.call("supervision.decide", { intent_id: intent.id, decision: { kind: "allow" } })).error).toMatchObject({ code: -32040 });
    const { events } = await sub.c.result("events.query", { proposal_id: "t1", kinds: ["supervision_decided"] });
    expect(events[0].data).toMatchObject({ decision: "deny", reviewer: "timeout" });
  });

  it("a supervisor that disconnects does not release what it left parked: another operator still sees and decides it", async () => {
    const sup = await open();
    const sub = await submitter();
    await sup.result("supervision.subscribe", { filter: { sessions: [sub.session] } });
    const submitted = sub.c.result("proposal.submit", { proposal: { id: "left", actions: [read()] } });
    const intent = await nextIntent(sup, 0);
    await sup.close();
    await new Promise((r) => setTimeout(r, 100));
    expect(sub.called).toEqual([]);
    const other = await open();
    const { intents } = await other.result("supervision.pending");
    expect(intents.map((i: { id: string }) => i.id)).toContain(intent.id);
    await other.result("supervision.decide", { intent_id: intent.id, decision: { kind: "deny", reason: "the first supervisor left" } });
    expect(statuses(await submitted)).toEqual(["rejected"]);
    expect(sub.called).toEqual([]);
  });

  it("a supervisor that disconnects and never comes back: the intent times out rejected", async () => {
    const sup = await open(quick);
    const sub = await submitter(quick);
    await sup.result("supervision.subscribe", { filter: { sessions: [sub.session] } });
    const submitted = sub.c.result("proposal.submit", { proposal: { id: "gone", actions: [read()] } });
    await nextIntent(sup, 0);
    await sup.close();
    const result = await submitted;
    expect(statuses(result)).toEqual(["rejected"]);
    expect(result.results[0].error).toContain("no supervisor decided");
    expect(sub.called).toEqual([]);
  });

  it("a parked intent counts against the connection's held bytes: one the server cannot hold is denied, not let through", async () => {
    const sup = await open(quick);
    const sub = await submitter(quick);
    await sup.result("supervision.subscribe", { filter: { sessions: [sub.session] } });
    // 300 actions of intent (ids, keys, digests) are more than this server's 64 KiB share per connection.
    const actions = Array.from({ length: 300 }, (_, i) => ({ ...read(`r${i}`), parameters: { path: "/tmp/a", [`key_${i}_${"k".repeat(40)}`]: 1 } }));
    const result = await sub.c.result("proposal.submit", { proposal: { id: "too-big", actions } });
    expect(new Set(statuses(result))).toEqual(new Set(["rejected"]));
    expect(result.results[0].error).toContain("a parked supervision intent");
    expect(sub.called).toEqual([]);
  });
});
