/**
 * `car serve --db`: real child processes on one SQLite file, restarted
 * between steps, driven by a real `ws` client. What one process wrote (state,
 * the hash-chained log, postures, approvals) is there after a restart; an
 * edited byte in the file is reported by `events.chain.verify`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TestClient } from "../../../packages/car-server/test/test-client.ts";

const cliRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const tsx = resolve(cliRoot, "../../node_modules/.bin/tsx");

interface Serve {
  url: string;
  token: string;
  /** SIGTERM, then the exit code once the process is gone. */
  stop(): Promise<number | null>;
}

let carHome: string;
let db: string;
const running = new Set<ChildProcess>();
const clients: TestClient[] = [];

beforeEach(async () => {
  carHome = await mkdtemp(join(tmpdir(), "car-serve-durable-"));
  db = join(carHome, "data", "car.db");
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.socket.terminate();
  for (const child of running) child.kill("SIGKILL");
  await rm(carHome, { recursive: true, force: true });
});

async function serve(): Promise<Serve> {
  const child = spawn(tsx, ["--conditions=source", "src/car.ts", "serve", "--port", "0", "--db", db], {
    cwd: cliRoot,
    env: { ...process.env, CAR_HOME: carHome },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  const exited = new Promise<number | null>((r) =>
    child.on("exit", (code) => {
      running.delete(child);
      r(code);
    }),
  );
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d) => (stdout += d));
  child.stderr!.on("data", (d) => (stderr += d));
  await expect.poll(() => /token file: /.test(stdout) || child.exitCode !== null, { timeout: 20_000 }).toBe(true);
  if (child.exitCode !== null) throw new Error(`car serve exited ${child.exitCode}: ${stderr}`);
  return {
    url: /listening on (\S+)/.exec(stdout)![1]!,
    token: /auth token: (\S+)/.exec(stdout)![1]!,
    stop() {
      child.kill("SIGTERM");
      return exited;
    },
  };
}

async function connect(s: Serve, agentId?: string): Promise<TestClient> {
  const c = await TestClient.open(agentId === undefined ? s.url : `${s.url}?agent_id=${agentId}`, s.token);
  clients.push(c);
  return c;
}

const writes = {
  proposal: {
    id: "durable-1",
    context: { ticket: "tamper-me-zzzz" },
    actions: [
      { id: "w1", type: "state_write", parameters: { key: "greeting", value: "hello" } },
      { id: "w2", type: "state_write", parameters: { key: "count", value: 2 }, dependencies: ["w1"] },
    ],
  },
};

/** A proposal calling `tool` once; the client answers every `tools.execute` with "ran". */
function callOf(id: string, tool: string) {
  return { proposal: { id, actions: [{ id: "t", type: "tool_call", tool, parameters: { target: "prod" } }] } };
}

async function submitAs(c: TestClient, id: string, tool: string): Promise<{ status: string; error?: string }> {
  await c.result("tools.register", [{ name: tool }]);
  c.handle("tools.execute", () => ({ result: "ran" }));
  const result = await c.result("proposal.submit", callOf(id, tool));
  return result.results[0];
}

describe("car serve --db (SQLite), across restarts", () => {
  it("keeps state and the audit log written by an earlier process", async () => {
    const first = await serve();
    const a = await connect(first);
    expect((await a.result("proposal.submit", writes)).results.map((r: any) => r.status)).toEqual(["succeeded", "succeeded"]);
    await a.result("state.set", { key: "note", value: { from: "first" }, tenant_id: "acme" });
    // Sessions share the database: a second connection of the same process sees the write at once.
    const b = await connect(first);
    expect(await b.result("state.get", { key: "count" })).toBe(2);
    const before = await a.result("events.count");
    expect(await first.stop()).toBe(0);

    const second = await serve();
    const c = await connect(second);
    expect(await c.result("state.snapshot")).toEqual({ greeting: "hello", count: 2 });
    expect(await c.result("state.get", { key: "note", tenant_id: "acme" })).toEqual({ from: "first" });
    expect(await c.result("events.count")).toBe(before);
    const logged = await c.result("events.query", { proposal_id: "durable-1", kinds: ["action_succeeded"] });
    expect(logged.events.map((e: any) => e.action_id).sort()).toEqual(["w1", "w2"]);
    expect(await c.result("events.chain.verify")).toEqual({ verified: before });
    expect(await second.stop()).toBe(0);
  }, 60_000);

  it("reports the first event whose stored bytes were edited in the database file", async () => {
    const first = await serve();
    const a = await connect(first);
    await a.result("proposal.submit", writes);
    const received = await a.result("events.query", { proposal_id: "durable-1", kinds: ["proposal_received"] });
    const tamperedSeq = received.events[0].seq as number;
    const total = await a.result("events.count");
    expect(await a.result("events.chain.verify")).toEqual({ verified: total });
    expect(await first.stop()).toBe(0);

    // One byte of the stored `proposal_received` body (the proposal's context is stored nowhere else; the file is
    // checkpointed at close). SQLite may keep stale copies of the page in free pages, so every copy gets the same edit.
    const bytes = await readFile(db);
    const needle = Buffer.from("tamper-me-zzzz");
    let at = bytes.indexOf(needle);
    expect(at).toBeGreaterThanOrEqual(0);
    for (; at >= 0; at = bytes.indexOf(needle, at + 1)) bytes[at + needle.length - 1] = "y".charCodeAt(0);
    await writeFile(db, bytes);

    const second = await serve();
    const c = await connect(second);
    const report = await c.result("events.chain.verify");
    expect(report).toMatchObject({ tampered_at: tamperedSeq });
    expect(report).not.toHaveProperty("verified");
    expect(await second.stop()).toBe(0);
  }, 60_000);

  it("keeps agent postures and approvals, and the approval gate follows them", async () => {
    const first = await serve();
    const operator = await connect(first);
    await operator.result("agent_permissions.set", { agent_id: "deployer", mode: "always_allow", tier: "full_access" });
    const policy = await operator.result("agent_permissions.set", { agent_id: "reader", mode: "deny" });
    expect(policy.agents).toEqual({
      deployer: { full_access: "always_allow" },
      reader: { read_only: "deny", sandbox_edit: "deny", full_access: "deny" },
    });
    expect(await first.stop()).toBe(0);

    const second = await serve();
    const op2 = await connect(second);
    expect((await op2.result("agent_permissions.get")).agents).toEqual(policy.agents);
    expect(await op2.result("agent_permissions.evaluate", { agent_id: "deployer", tier: "full_access" })).toEqual({
      agent_id: "deployer",
      tier: "full_access",
      mode: "always_allow",
      has_override: true,
    });
    // deploy_service is full_access: the deployer's posture lets it run with no approver on the line.
    expect(await submitAs(await connect(second, "deployer"), "deploy-1", "deploy_service")).toMatchObject({ status: "succeeded" });
    // The reader's posture denies even a read.
    const reader = await submitAs(await connect(second, "reader"), "read-1", "read_file");
    expect(reader.status).not.toBe("succeeded");
    expect(reader.error).toContain("approval gate");
    // An agent without a posture gets the tier gate: full_access needs a human, and nobody is asked.
    // The admission refusal (§16) records no decision, so the operation is still pending approval, not denied.
    const intern = await connect(second, "intern");
    expect((await submitAs(intern, "deploy-2", "deploy_service")).status).not.toBe("succeeded");
    const [pending] = (await intern.result("permission.evaluate", callOf("deploy-3", "deploy_service"))).decisions;
    expect(pending).toMatchObject({ decision: "needs_approval", required: "full_access", granted: "sandbox_edit" });
    // An operator approves the operation by its fingerprint; the decision is stamped with the operator's connection.
    const record = await op2.result("permission.approve", { fingerprint: pending.fingerprint, required_tier: "full_access", reason: "release day" });
    expect(record).toMatchObject({ decision: "approved", fingerprint: pending.fingerprint, reviewer: expect.stringMatching(/^conn:sess-/) });
    expect(await second.stop()).toBe(0);

    const third = await serve();
    const intern3 = await connect(third, "intern");
    expect(await submitAs(intern3, "deploy-4", "deploy_service")).toMatchObject({ status: "succeeded" });
    const reset = await (await connect(third)).result("agent_permissions.reset", { agent_id: "reader" });
    expect(reset.agents).toEqual({ deployer: { full_access: "always_allow" } });
    expect(await third.stop()).toBe(0);
  }, 90_000);
});
