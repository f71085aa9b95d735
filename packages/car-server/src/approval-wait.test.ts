/**
 * Approvals that wait, through `car serve` itself on a real SQLite file
 * (the ledger every connection shares): `proposal.submit { …,
 * wait_for_approval_ms }` parks a proposal that needs an approval instead
 * of rejecting it; `permission.pending` lists the wait; `permission.approve`
 * / `reject` on another connection releases it; the deadline rejects it;
 * nothing runs before the decision; `approval_requested` /
 * `approval_decided` carry the wait.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runServe } from "./serve-command.ts";
import { recordingServeIo, TestClient } from "../test/test-client.ts";

let carHome: string;
let stop: () => Promise<number>;
let url: string;
let token: string;
const clients: TestClient[] = [];

beforeAll(async () => {
  carHome = await mkdtemp(join(tmpdir(), "car-serve-wait-"));
  const io = recordingServeIo(carHome);
  const done = runServe(["--port", "0", "--db", join(carHome, "car.db")], io);
  for (let i = 0; i < 400 && io.out.length + io.err.length < 2; i++) await new Promise((r) => setTimeout(r, 50));
  url = io.out[0]!.replace("car serve listening on ", "");
  token = io.out[1]!.replace("auth token: ", "");
  stop = () => {
    io.signal("SIGTERM");
    return done;
  };
}, 30_000);
afterAll(async () => {
  for (const c of clients) c.socket.terminate();
  await stop();
  await rm(carHome, { recursive: true, force: true });
});

async function open(agentId?: string): Promise<TestClient> {
  const c = await TestClient.open(agentId === undefined ? url : `${url}?agent_id=${agentId}`, token);
  clients.push(c);
  return c;
}

async function runner(agentId?: string): Promise<{ c: TestClient; called: string[] }> {
  const c = await open(agentId);
  await c.result("session.init", { client_id: "w", tools: [{ name: "send_email" }, { name: "read_file" }] });
  const called: string[] = [];
  c.handle("tools.execute", (p: { tool: string }) => {
    called.push(p.tool);
    return { result: "sent" };
  });
  return { c, called };
}

const email = (to: string) => ({ id: "s", type: "tool_call", tool: "send_email", parameters: { to, body: "quarterly numbers" } });

async function waitFor(operator: TestClient, proposalId: string): Promise<any> {
  let found: any;
  await expect
    .poll(
      async () => {
        found = (await operator.result("permission.pending")).pending.find((w: { proposal_id: string }) => w.proposal_id === proposalId);
        return found !== undefined;
      },
      { timeout: 5_000 },
    )
    .toBe(true);
  return found;
}

describe("proposal.submit with wait_for_approval_ms", () => {
  it("waits in permission.pending, runs nothing, and runs once another connection approves; the events carry the wait", async () => {
    const { c, called } = await runner("mailer");
    const operator = await open();
    const submitted = c.result("proposal.submit", { proposal: { id: "wait-approve", actions: [email("a@example.com")] }, wait_for_approval_ms: 20_000 });
    const wait = await waitFor(operator, "wait-approve");
    expect(wait).toMatchObject({
      fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/),
      required: "full_access",
      granted: "sandbox_edit",
      tool: "send_email",
      parameter_keys: ["body", "to"],
      asked_by: "agent:mailer",
      action_id: "s",
    });
    expect(JSON.stringify(wait)).not.toContain("a@example.com");
    expect(called).toEqual([]);
    // The agent sees its own wait; another agent sees none of it.
    expect((await c.result("permission.pending")).pending.map((w: { id: string }) => w.id)).toContain(wait.id);
    const other = await open("someone-else");
    expect((await other.result("permission.pending")).pending).toEqual([]);
    // An agent cannot approve its own wait.
    expect((await c.call("permission.approve", { fingerprint: wait.fingerprint, required_tier: "full_access" })).error).toMatchObject({ code: -32001 });
    expect(called).toEqual([]);

    await operator.result("permission.approve", { fingerprint: wait.fingerprint, required_tier: "full_access" });
    const result = await submitted;
    expect(result.results.map((r: { status: string }) => r.status)).toEqual(["succeeded"]);
    expect(called).toEqual(["send_email"]);
    expect((await operator.result("permission.pending")).pending.find((w: { id: string }) => w.id === wait.id)).toBeUndefined();

    const { events } = await operator.result("events.query", { proposal_id: "wait-approve", kinds: ["approval_requested", "approval_decided"] });
    const requested = events.find((e: { kind: string }) => e.kind === "approval_requested");
    const decided = events.find((e: { kind: string }) => e.kind === "approval_decided");
    expect(requested.data).toMatchObject({ fingerprint: wait.fingerprint, required: "full_access", granted: "sandbox_edit", tool: "send_email" });
    expect(decided.data).toMatchObject({ decision: "allow", reviewer: expect.stringMatching(/^conn:/) });
    expect(decided.data.wait_ms).toBeGreaterThanOrEqual(0);
  }, 30_000);

  it("permission.reject releases the wait as a rejection; nothing runs", async () => {
    const { c, called } = await runner("mailer");
    const operator = await open();
    const submitted = c.result("proposal.submit", { proposal: { id: "wait-reject", actions: [email("b@example.com")] }, wait_for_approval_ms: 20_000 });
    const wait = await waitFor(operator, "wait-reject");
    await operator.result("permission.reject", { fingerprint: wait.fingerprint, required_tier: "full_access", reason: "not this one" });
    const result = await submitted;
    expect(result.results[0].status).toBe("rejected");
    expect(result.results[0].error).toContain("denied by approval gate");
    expect(called).toEqual([]);
  }, 30_000);

  it("the deadline ends the wait in a rejection, recorded with reviewer timeout", async () => {
    const { c, called } = await runner("mailer");
    const started = Date.now();
    const result = await c.result("proposal.submit", { proposal: { id: "wait-timeout", actions: [email("c@example.com")] }, wait_for_approval_ms: 600 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(550);
    expect(result.results[0].status).toBe("rejected");
    expect(result.results[0].error).toContain("no decision within 600 ms");
    expect(called).toEqual([]);
    const { events } = await c.result("events.query", { proposal_id: "wait-timeout", kinds: ["approval_decided"] });
    expect(events[0].data).toMatchObject({ decision: "deny", reviewer: "timeout" });
  }, 30_000);

  it("refuses a wait that is not a positive integer of ms up to a day", async () => {
    const c = await open();
    for (const bad of [0, -5, 1.5, "10s", 86_400_001]) {
      const reply = await c.call("proposal.submit", { proposal: { id: "x", actions: [] }, wait_for_approval_ms: bad });
      expect(reply.error, String(bad)).toMatchObject({ code: -32602 });
    }
  });
});
