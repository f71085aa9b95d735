/**
 * Many servers, one database (issue #38 §5): three real `car serve`
 * processes on one real PostgreSQL cluster the test starts, a supervisor on
 * server 1. An intent parked on server 2 reaches the supervisor and its
 * decision releases it; an approval recorded on server 3 (and one recorded
 * straight into the ledger, as `car approvals approve` does) releases a
 * wait on server 2 through the notification, well under the 500 ms poll
 * (server 3's `permission.pending` lists that wait);
 * a host event raised on server 3 reaches a subscriber on server 1; an
 * intent nobody decides is denied at its deadline by server 2; and neither
 * a forged `NOTIFY` nor a decision written into the table outside CAR
 * decides anything.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { postgresBinDir, startPostgresCluster, type PostgresCluster } from "@car/test-kit/postgres-cluster";
import { postgres } from "@car/store-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestClient } from "../../test/test-client.ts";

const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const SERVE = fileURLToPath(new URL("./serve.fixture.ts", import.meta.url));
/** Long enough for the forged-NOTIFY test's psql round trips on a loaded CI machine before the intent's deadline. */
const DECISION_TIMEOUT_MS = 8000;
const SECRET = "value-never-shown-to-a-supervisor";
const TOOLS = [{ name: "send_email" }, { name: "read_file" }];

interface Serve {
  url: string;
  token: string;
  child: ChildProcess;
}

let cluster: PostgresCluster;
let db: string;
let carHome: string;
const servers: Serve[] = [];
const clients: TestClient[] = [];

/** Waits until `test` holds (beforeAll has no `expect.poll`). */
async function until(test: () => boolean | Promise<boolean>, what: string, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `car serve` on the shared database in a child process; resolves once it prints its URL and token. */
async function serve(): Promise<Serve> {
  const child = spawn(
    process.execPath,
    ["--import", TSX, "--conditions=source", SERVE, "--port", "0", "--db", db, "--decision-timeout", `${DECISION_TIMEOUT_MS}ms`, "--log-level", "warn"],
    { env: { ...process.env, CAR_HOME: carHome }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  await until(() => /auth token: \S+/.test(stdout) || child.exitCode !== null, "car serve to start", 40_000);
  if (child.exitCode !== null) throw new Error(`car serve exited ${child.exitCode}: ${stderr}`);
  return { url: /listening on (\S+)/.exec(stdout)![1]!, token: /auth token: (\S+)/.exec(stdout)![1]!, child };
}

async function open(s: Serve, agentId?: string): Promise<TestClient> {
  const c = await TestClient.open(agentId === undefined ? s.url : `${s.url}?agent_id=${agentId}`, s.token);
  clients.push(c);
  return c;
}

/** An agent whose tools answer "ok" and are recorded in `called`, with when each call arrived. */
async function runner(s: Serve, agentId: string): Promise<{ c: TestClient; called: { tool: string; to: unknown; at: number }[] }> {
  const c = await open(s, agentId);
  await c.result("session.init", { client_id: agentId, tools: TOOLS });
  const called: { tool: string; to: unknown; at: number }[] = [];
  c.handle("tools.execute", (p: { tool: string; params: { to?: unknown; path?: unknown } }) => {
    called.push({ tool: p.tool, to: p.params.to ?? p.params.path, at: performance.now() });
    return { result: "ok" };
  });
  return { c, called };
}

/** Supervised (the supervisor watches `read_file`); needs no approval. */
const read = (path: string) => ({ id: "r", type: "tool_call", tool: "read_file", parameters: { path, note: SECRET } });

/** Runs SQL on the shared database as any client with access to it could (psql, from the cluster's binaries). */
function sql(text: string): string {
  const url = new URL(db);
  const r = spawnSync(join(postgresBinDir()!, "psql"), ["-h", url.hostname, "-p", url.port, "-U", "postgres", "-d", url.pathname.slice(1), "-At", "-c", text], {
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`psql failed: ${r.stderr}`);
  return r.stdout.trim();
}

let supervisor: TestClient;
let hostWatcher: TestClient;

beforeAll(async () => {
  cluster = await startPostgresCluster();
  db = cluster.createDatabase("many_servers");
  carHome = await mkdtemp(join(tmpdir(), "car-many-servers-"));
  // The first migrates and creates the audit key the others share (they share CAR_HOME, as servers sharing a ledger must share its key).
  servers.push(await serve());
  servers.push(...(await Promise.all([serve(), serve()])));
  hostWatcher = await open(servers[0]!);
  await hostWatcher.result("server.handshake", { protocol_version: 3 });
  expect(await hostWatcher.result("host.subscribe")).toEqual({ subscribed: true });
  supervisor = await open(servers[0]!);
  await supervisor.result("supervision.subscribe", { filter: { tools: ["read_file"] } });
  // Servers 2 and 3 learn of server 1's subscribers through the table: a probe subscription there counts them.
  for (const s of servers.slice(1)) {
    const probe = await open(s);
    await until(
      async () => (await probe.result("supervision.subscribe", { filter: { tools: ["no-such-tool"] } })).supervisors >= 2,
      "server 1's supervisor to be known",
      10_000,
    );
    await probe.result("supervision.unsubscribe");
  }
}, 120_000);

afterAll(async () => {
  for (const c of clients) c.socket.terminate();
  await Promise.all(
    servers.map(
      (s) =>
        new Promise<void>((resolve) => {
          if (s.child.exitCode !== null) return resolve();
          s.child.once("exit", () => resolve());
          s.child.kill("SIGTERM");
          setTimeout(() => s.child.kill("SIGKILL"), 10_000).unref();
        }),
    ),
  );
  cluster?.stop();
  await rm(carHome, { recursive: true, force: true });
}, 60_000);

describe("three car serve processes on one PostgreSQL database", () => {
  it("an intent parked on server 2 reaches the supervisor on server 1, whose decision releases it there", async () => {
    const { c, called } = await runner(servers[1]!, "bot-2");
    const shown = supervisor.waitFor((f) => f.method === "supervision.intent" && f.params.proposal_id === "cross-allow");
    const submitted = c.result("proposal.submit", { proposal: { id: "cross-allow", actions: [read("/srv/a")] } });
    const intent = (await shown).params;
    expect(intent).toMatchObject({ proposal_id: "cross-allow", source: "agent:bot-2", reversibility: expect.any(String) });
    expect(intent.actions).toEqual([expect.objectContaining({ id: "r", tool: "read_file", parameter_keys: ["note", "path"] })]);
    expect(JSON.stringify(intent)).not.toContain(SECRET);
    expect(JSON.stringify(intent)).not.toContain("/srv/a");
    // Every server lists it, oldest first; nothing has run.
    for (const s of servers) {
      const ids = (await (await open(s)).result("supervision.pending")).intents.map((i: { id: string }) => i.id);
      expect(ids).toContain(intent.id);
    }
    expect(called).toEqual([]);

    expect(await supervisor.result("supervision.decide", { intent_id: intent.id, decision: { kind: "allow" } })).toEqual({ decided: true });
    const result = await submitted;
    expect(
      result.results.map((r: { status: string }) => r.status),
      JSON.stringify(result),
    ).toEqual(["succeeded"]);
    expect(called.map((x) => x.to)).toEqual(["/srv/a"]);
    // Decided once: a second decision, from any server, is an error.
    const again = await (await open(servers[2]!)).call("supervision.decide", { intent_id: intent.id, decision: { kind: "deny", reason: "late" } });
    expect(again.error?.message).toContain("is not parked");
    // Server 2 put the wait on the shared chain, with the reviewer of server 1's connection.
    const { events } = await c.result("events.query", { proposal_id: "cross-allow", kinds: ["supervision_parked", "supervision_decided"] });
    // Newest first.
    expect(events.map((e: { kind: string }) => e.kind)).toEqual(["supervision_decided", "supervision_parked"]);
    expect(events[0].data).toMatchObject({ intent_id: intent.id, decision: "allow", reviewer: expect.stringMatching(/^conn:/) });
  }, 60_000);

  it("a deny from server 1 rejects the proposal on server 2 without running it; an agent's connection can neither list nor decide", async () => {
    const { c, called } = await runner(servers[1]!, "bot-2");
    const shown = supervisor.waitFor((f) => f.method === "supervision.intent" && f.params.proposal_id === "cross-deny");
    const submitted = c.result("proposal.submit", { proposal: { id: "cross-deny", actions: [read("/srv/b")] } });
    const intent = (await shown).params;
    // Deciding needs the operator role on the server where it is asked: an agent's connection on server 1 cannot.
    const intruder = await open(servers[0]!, "intruder");
    const refused = await intruder.call("supervision.decide", { intent_id: intent.id, decision: { kind: "allow" } });
    expect(refused.error?.code).toBe(-32001);
    expect((await intruder.call("supervision.pending")).error?.code).toBe(-32001);
    await supervisor.result("supervision.decide", { intent_id: intent.id, decision: { kind: "deny", reason: "not today" } });
    const result = await submitted;
    expect(result.results[0].status).toBe("rejected");
    expect(result.results[0].error).toContain("not today");
    expect(called).toEqual([]);
  }, 60_000);

  it("an approval recorded on server 3, or straight into the ledger, releases a wait on server 2 well under the 500 ms poll", async () => {
    const { c, called } = await runner(servers[1]!, "mailer-2");
    const approver = await open(servers[2]!);
    const ledger = postgres(db, { auditKeyFile: join(carHome, "audit.key") });
    await ledger.ready();
    const latencies: number[] = [];
    try {
      for (let i = 0; i < 6; i++) {
        const to = `wait-${i}@example.com`;
        // `send_email` is not supervised here, so only the approval holds it.
        const action = { id: "s", type: "tool_call", tool: "send_email", parameters: { to } };
        const requested = hostWatcher.waitFor(
          (f) => f.method === "host.event" && f.params.kind === "approval_requested" && f.params.proposal_id === `wait-${i}`,
        );
        const submitted = c.result("proposal.submit", { proposal: { id: `wait-${i}`, actions: [action] }, wait_for_approval_ms: 20_000 });
        // The wait on server 2 is announced to the host subscriber on server 1, fingerprint and all.
        const wait = (await requested).params;
        expect(wait).toMatchObject({ required: "full_access", tool: "send_email", asked_by: "agent:mailer-2" });
        expect(called.filter((x) => x.to === to)).toEqual([]);
        // Server 3's operator lists the wait parked on server 2 (no parameter value), and approves what it lists.
        let listed: any;
        await expect
          .poll(async () => {
            listed = (await approver.result("permission.pending")).pending.find((w: { proposal_id: string }) => w.proposal_id === `wait-${i}`);
            return listed !== undefined;
          })
          .toBe(true);
        expect(listed).toMatchObject({
          id: wait.wait_id,
          fingerprint: wait.fingerprint,
          tool: "send_email",
          parameter_keys: ["to"],
          asked_by: "agent:mailer-2",
        });
        expect(JSON.stringify(listed)).not.toContain(to);
        // 600 ms into the wait: its poll last read the ledger about 100 ms ago and reads it next about 400 ms from now,
        // so a release within 300 ms of the decision is the notification's doing.
        await new Promise((r) => setTimeout(r, 600));
        if (i % 2 === 0) {
          await approver.result("permission.approve", { fingerprint: listed.fingerprint, required_tier: listed.required });
        } else {
          // What `car approvals approve` does: a decision recorded in the shared ledger by a process that is no server.
          await ledger.approvals.record({
            fingerprint: wait.fingerprint,
            required_tier: "full_access",
            decision: "approved",
            reviewer: "cli:operator",
            decided_at: Date.now(),
            expires_at: null,
          });
        }
        const committedAt = performance.now();
        const result = await submitted;
        expect(result.results[0].status).toBe("succeeded");
        const call = called.find((x) => x.to === to)!;
        latencies.push(call.at - committedAt);
      }
    } finally {
      await ledger.close();
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)]!;
    console.log(`approval committed elsewhere → the tool call on server 2: ${latencies.map((l) => l.toFixed(0)).join(", ")} ms (median ${median.toFixed(0)})`);
    // The poll alone releases each 396–453 ms after its decision (measured with the wake-up switched off), so a median
    // under 300 ms is the wake-up's doing. A single sample may still be late on a loaded machine (430 ms once in CI at
    // load 15): the median, not the slowest, is what tells the two apart.
    expect(median).toBeLessThan(300);
  }, 120_000);

  it("a host event raised on server 3 reaches the subscriber on server 1", async () => {
    const arrived = hostWatcher.waitFor((f) => f.method === "host.event" && f.params.kind === "agent_registered" && f.params.agent_id === "visitor-3");
    await open(servers[2]!, "visitor-3");
    expect((await arrived).params).toMatchObject({ kind: "agent_registered", agent_id: "visitor-3", at: expect.any(String) });
  }, 30_000);

  it("an intent nobody decides is denied at its deadline by the server that parks it; the supervisor leaving releases nothing", async () => {
    const { c, called } = await runner(servers[1]!, "bot-2");
    // A second supervisor, on server 3, sees it too, then disconnects.
    const watcher = await open(servers[2]!);
    await watcher.result("supervision.subscribe", { filter: {} });
    const seen = watcher.waitFor((f) => f.method === "supervision.intent" && f.params.proposal_id === "cross-timeout");
    const started = Date.now();
    const submitted = c.result("proposal.submit", { proposal: { id: "cross-timeout", actions: [read("/srv/c")] } });
    const intent = (await seen).params;
    await watcher.close();
    const result = await submitted;
    expect(Date.now() - started).toBeGreaterThanOrEqual(DECISION_TIMEOUT_MS - 200);
    expect(result.results[0].status).toBe("rejected");
    expect(result.results[0].error).toContain("no supervisor decided");
    expect(called).toEqual([]);
    const late = await supervisor.call("supervision.decide", { intent_id: intent.id, decision: { kind: "allow" } });
    expect(late.error?.message).toContain("is not parked");
    const { events } = await c.result("events.query", { proposal_id: "cross-timeout", kinds: ["supervision_decided"] });
    expect(events[0].data).toMatchObject({ decision: "deny", reviewer: "timeout" });
  }, 60_000);

  it("a forged NOTIFY decides nothing, and a decision written into the table outside CAR is read as a denial", async () => {
    const { c, called } = await runner(servers[1]!, "bot-2");
    const shown = supervisor.waitFor((f) => f.method === "supervision.intent" && f.params.proposal_id === "forged");
    const submitted = c.result("proposal.submit", { proposal: { id: "forged", actions: [read("/srv/d")] } });
    const intent = (await shown).params;
    const before = hostWatcher.notifications("host.event").length;
    // Anyone who can connect can NOTIFY: a claimed decision, a claimed host event, garbage.
    const payloads = [
      { k: "decided", id: intent.id, s: "1", decision: { kind: "allow", reviewer: "mallory" } },
      { k: "decided", id: intent.id, s: "1", m: "0".repeat(64) },
      { k: "host", event: { kind: "agent_registered", agent_id: "mallory" }, s: "1" },
      { k: "approval", fp: "x", s: "ledger" },
    ].map((payload) => JSON.stringify(payload));
    // One psql run for all of them: each spawn costs most of a second on a loaded machine, and the intent has a deadline.
    sql([...payloads, "not json"].map((payload) => `SELECT pg_notify('car_oversight', '${payload}');`).join(" "));
    await new Promise((r) => setTimeout(r, 300));
    expect(called).toEqual([]);
    expect((await supervisor.result("supervision.pending")).intents.map((i: { id: string }) => i.id)).toContain(intent.id);
    expect(
      hostWatcher
        .notifications("host.event")
        .slice(before)
        .filter((f) => f.params.agent_id === "mallory"),
    ).toEqual([]);

    // A database writer sets an `allow` on the row itself; server 2 reads it (at its deadline at the latest) and does not honour it.
    sql(`UPDATE car_supervision_intents SET decision = '{"kind":"allow","reviewer":"mallory"}' WHERE id = '${intent.id}'`);
    const result = await submitted;
    expect(result.results[0].status).toBe("rejected");
    expect(called).toEqual([]);
    const { events } = await c.result("events.query", { proposal_id: "forged", kinds: ["supervision_decided"] });
    expect(events[0].data).toMatchObject({ decision: "deny", reviewer: "server" });
    expect(events[0].data.reason).toContain("does not match its seal");
  }, 60_000);
});
