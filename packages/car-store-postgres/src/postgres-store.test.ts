/**
 * The PostgreSQL store between runtimes with their own connections (one
 * process here; the race test uses processes): the optimistic commit check
 * under each mode, interleaved deterministically (runtime A reads `k` and
 * waits in a tool while runtime B commits a write to `k`); migrations; the
 * shared, commit-ordered log.
 */
import type { JsonValue, ProposalResult } from "@car/ir";
import type { TransactionMode } from "@car/verify";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresBinDir, startPostgresCluster } from "@car/test-kit/postgres-cluster";
import type { PostgresCluster } from "@car/test-kit/postgres-cluster";
import { type CarEvent, Runtime } from "@car/engine";
import { MIGRATIONS, postgres } from "./index.ts";
import type { PostgresStore } from "./index.ts";

const installed = postgresBinDir() !== undefined;
if (!installed) console.warn("PostgreSQL is not installed (apt-get install postgresql): skipping the PostgreSQL store tests");

let cluster: PostgresCluster;
const open: PostgresStore[] = [];
beforeAll(async () => {
  if (installed) cluster = await startPostgresCluster();
});
afterAll(async () => {
  for (const store of open) await store.close();
  cluster?.stop();
});

let databases = 0;
function store(url: string, mode: TransactionMode = "strict"): PostgresStore {
  const s = postgres(url, { mode, poolSize: 2 });
  open.push(s);
  return s;
}

async function twoStores(mode: TransactionMode): Promise<[PostgresStore, PostgresStore, string]> {
  const url = cluster.createDatabase(`db_${++databases}`);
  const a = store(url, mode);
  const b = store(url);
  await Promise.all([a.ready(), b.ready()]);
  return [a, b, url];
}

/** A increments `k` (read, slow tool, write) while B sets it to 10 in between. */
async function interleave(mode: TransactionMode): Promise<{ a: PostgresStore; url: string; result: ProposalResult }> {
  const [a, b, url] = await twoStores(mode);
  b.state.set("k", 1);
  await b.flush();
  const rtA = new Runtime({ store: a });
  const rtB = new Runtime({ store: b });
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let entered!: () => void;
  const inTool = new Promise<void>((resolve) => (entered = resolve));
  rtA.registerTool("slow_inc", async (params) => {
    entered();
    await gate;
    return (params["n"] as number) + 1;
  });
  const pending = rtA.executeProposal({
    id: "a",
    actions: [
      { id: "r", type: "state_read", parameters: { key: "k" } },
      { id: "inc", type: "tool_call", tool: "slow_inc", parameters: { n: "$r.output" }, dependencies: ["r"] },
      { id: "w", type: "state_write", parameters: { key: "k", value: "$inc.output" }, dependencies: ["inc"] },
    ],
  });
  await inTool;
  const other = await rtB.executeProposal({ id: "b", actions: [{ id: "w", type: "state_write", parameters: { key: "k", value: 10 } }] });
  expect(other.results[0]!.status).toBe("succeeded");
  release();
  return { a, url, result: await pending };
}

describe.skipIf(!installed)("transaction modes across runtimes", () => {
  it("strict: the stale reader is rolled back with stale_read naming the key; the other writer's value stands", async () => {
    const { a, url, result } = await interleave("strict");
    expect(result.results.map((r) => r.rolled_back === true)).toEqual([true, true, true]);
    const completed = (await a.events.queryShared({ proposal_id: "a", kinds: ["proposal_completed"] })).at(-1)!;
    expect(completed.data).toMatchObject({ outcome: "rolled_back", reason: "commit refused: state the proposal read changed before it committed: k" });
    // The same refusal, in the same words, as on SQLite; no state_changed for a change that never landed.
    const refused = await a.events.queryShared({ proposal_id: "a", kinds: ["commit_refused", "state_changed"] });
    expect(refused.map((e) => [e.kind, e.data])).toEqual([
      [
        "commit_refused",
        { code: "stale_read", keys: ["k"], reason: "commit refused: state the proposal read changed before it committed: k", run_id: completed.data["run_id"] },
      ],
    ]);
    expect((await a.events.queryShared({ proposal_id: "a", kinds: ["proposal_completed"] })).map((e) => e.data["outcome"])).toEqual(["rolled_back"]);
    const check = store(url);
    await check.ready();
    expect(check.state.get("k")).toBe(10);
    expect(check.state.version("k")).toBe(2);
  });

  it("warn: the commit goes through and a transaction_warning event in its run names the conflict", async () => {
    const { a, result } = await interleave("warn");
    expect(result.results.every((r) => r.status === "succeeded" && r.rolled_back !== true)).toBe(true);
    const events = await a.events.queryShared({ proposal_id: "a" });
    const warning = events.find((e) => e.kind === "transaction_warning")!;
    expect(warning.data).toMatchObject({ mode: "warn", keys: ["k"], conflicts: [{ kind: "stale_read", key: "k", actions: ["r"] }] });
    // The store writes the warning itself, and names the run it is about like every other event of the run.
    expect(warning.data["run_id"]).toMatch(/^run-/);
    expect(events.map((e) => e.data["run_id"])).toEqual(events.map(() => warning.data["run_id"]));
    expect(events.at(-1)!.kind).toBe("proposal_completed");
    expect(events.find((e) => e.kind === "state_changed")!.data).toMatchObject({ key: "k", value: 2, version: 3 });
    expect(a.state.get("k")).toBe(2);
    expect(a.state.version("k")).toBe(3);
  });

  it("off: nothing is checked, and the write still gets the key's real next version", async () => {
    const { a, result } = await interleave("off");
    expect(result.results.every((r) => r.rolled_back !== true)).toBe(true);
    const events = await a.events.queryShared({ proposal_id: "a" });
    expect(events.some((e) => e.kind === "transaction_warning")).toBe(false);
    expect(events.find((e) => e.kind === "state_changed")!.data).toMatchObject({ key: "k", value: 2, version: 3 });
    expect(a.state.version("k")).toBe(3);
  });

  it("off: a delete of a key another runtime deleted first changes nothing (no version, no transition), as on SQLite", async () => {
    const [a, b, url] = await twoStores("off");
    b.state.set("k", 1);
    await b.flush();
    const timestamp = new Date().toISOString();
    await a.beginProposal({ proposal_id: "p", run_id: "run-p", timestamp });
    expect(a.state.exists("k")).toBe(true);
    b.state.delete("k");
    await b.flush();
    const event = (kind: string, data: Record<string, JsonValue>, action_id?: string): CarEvent => ({
      seq: 0,
      kind,
      proposal_id: "p",
      timestamp,
      data,
      ...(action_id === undefined ? {} : { action_id }),
    });
    // What a run that deleted k (its cache still holds it) and then set it writes.
    const made = await a.commitProposal({
      proposal_id: "p",
      run_id: "run-p",
      outcome: "committed",
      mutations: [
        { key: "k", mutation: { op: "delete" }, action_id: "d" },
        { key: "k", mutation: { op: "set", value: 5 }, action_id: "s" },
      ],
      reads: [],
      assumptions: [],
      events: [
        event("proposal_received", {}),
        event("state_changed", { key: "k", op: "delete", version: 2 }, "d"),
        event("state_changed", { key: "k", op: "set", value: 5, version: 3 }, "s"),
        event("proposal_completed", { outcome: "committed" }),
      ],
    });
    expect(made.map((t) => [t.mutation.op, t.version])).toEqual([["set", 3]]);
    expect([a.state.get("k"), a.state.version("k")]).toEqual([5, 3]);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      expect((await client.query("SELECT version::int FROM car_state WHERE key = 'k'")).rows).toEqual([{ version: 3 }]);
      const record = await client.query("SELECT mutation, previous_version::int, version::int FROM car_transitions ORDER BY id");
      expect(record.rows.map((r) => [JSON.parse(r.mutation).op, r.previous_version, r.version])).toEqual([
        ["set", 0, 1],
        ["delete", 1, 2],
        ["set", 2, 3],
      ]);
    } finally {
      await client.end();
    }
    expect(await a.verifyChain()).toMatchObject({ ok: true });
  });

  it("refuses stale assumptions (read_version, expected_value) with stale_read and a blind write on a moved key with write_conflict, naming the keys", async () => {
    const [a, b] = await twoStores("strict");
    b.state.set("k", 1);
    await b.flush();
    await a.beginProposal({ proposal_id: "seen", run_id: "run-seen", timestamp: new Date().toISOString() });
    expect(a.state.version("k")).toBe(1);
    const base = { run_id: "run-x", outcome: "committed" as const, reads: [], events: [] };
    const write = { key: "out", mutation: { op: "set" as const, value: 1 }, action_id: "x" };
    await expect(
      a.commitProposal({ ...base, proposal_id: "p1", mutations: [write], assumptions: [{ action_id: "x", key: "k", read_version: 0 }] }),
    ).rejects.toMatchObject({
      code: "stale_read",
      details: { keys: ["k"] },
    });
    await expect(
      a.commitProposal({ ...base, proposal_id: "p2", mutations: [write], assumptions: [{ action_id: "x", key: "k", expected_value: 5 }] }),
    ).rejects.toMatchObject({
      code: "stale_read",
      details: { keys: ["k"], conflicts: [{ kind: "belief_divergence" }] },
    });
    // Assumptions that hold commit.
    await a.commitProposal({ ...base, proposal_id: "p3", mutations: [write], assumptions: [{ action_id: "x", key: "k", read_version: 1, expected_value: 1 }] });
    expect(a.state.get("out")).toBe(1);
    // B moves k; A's cache still says version 1, so a write built on it conflicts.
    b.state.set("k", 2);
    await b.flush();
    await expect(
      a.commitProposal({ ...base, proposal_id: "p4", mutations: [{ key: "k", mutation: { op: "set", value: 3 }, action_id: "y" }], assumptions: [] }),
    ).rejects.toMatchObject({
      code: "write_conflict",
      details: { keys: ["k"], conflicts: [{ kind: "write_write", key: "k", actions: ["y"] }] },
    });
    expect(a.state.get("k")).toBe(1);
  });
});

describe.skipIf(!installed)("migrations", () => {
  it("are applied once, by whichever runtime starts first, and starting again is a no-op that keeps the data", async () => {
    const url = cluster.createDatabase(`db_${++databases}`);
    const [a, b] = [store(url), store(url)];
    await Promise.all([a.ready(), b.ready()]);
    const every = MIGRATIONS.map((m) => m.version);
    expect(every).toEqual(every.map((_, i) => i + 1));
    expect([a.migrationsApplied, b.migrationsApplied].sort()).toEqual([[], every]);
    a.state.set("kept", true);
    await a.close();
    const again = store(url);
    await again.ready();
    expect(again.migrationsApplied).toEqual([]);
    expect(again.state.get("kept")).toBe(true);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      expect((await client.query("SELECT version FROM car_migrations ORDER BY version")).rows).toEqual(every.map((version) => ({ version })));
      // A database migrated by a newer runtime is refused, not guessed at.
      await client.query("INSERT INTO car_migrations (version, name) VALUES (999, 'from the future')");
    } finally {
      await client.end();
    }
    await expect(store(url).ready()).rejects.toMatchObject({ code: "storage_error", message: expect.stringContaining("version 999") });
  });

  it("give a database written before the transition record (v8) the record its log says, so it still verifies", async () => {
    const url = cluster.createDatabase(`db_${++databases}`);
    const before = store(url);
    const rt = new Runtime({ store: before });
    await rt.executeProposal({ id: "p1", actions: [{ id: "w", type: "state_write", parameters: { key: "k", value: 1 } }] });
    before.state.set("k", 2);
    before.state.delete("k");
    await before.close();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query("DROP TABLE car_transitions; DELETE FROM car_migrations WHERE version = 8");
      const upgraded = store(url);
      await upgraded.ready();
      expect(upgraded.migrationsApplied).toEqual([8]);
      const record = await client.query("SELECT key, mutation, version::int, proposal_id, action_id FROM car_transitions ORDER BY id");
      expect(record.rows).toEqual([
        { key: "k", mutation: JSON.stringify({ op: "set", value: 1 }), version: 1, proposal_id: "p1", action_id: "w" },
        { key: "k", mutation: JSON.stringify({ op: "set", value: 2 }), version: 2, proposal_id: null, action_id: null },
        { key: "k", mutation: JSON.stringify({ op: "delete" }), version: 3, proposal_id: null, action_id: null },
      ]);
      expect(await upgraded.verifyChain()).toMatchObject({ ok: true });
    } finally {
      await client.end();
    }
  });

  it("reports an unreachable database as storage_error", async () => {
    const closed = cluster.url.replace(/:\d+\//, ":1/");
    await expect(store(closed).ready()).rejects.toMatchObject({ code: "storage_error" });
  });
});

describe.skipIf(!installed)("the shared log", () => {
  it("orders every runtime's events by commit in one chain, queryable across runtimes by proposal, action, kind, time and data", async () => {
    const [a, b] = await twoStores("strict");
    const rtA = new Runtime({ store: a });
    const rtB = new Runtime({ store: b });
    for (const rt of [rtA, rtB]) rt.registerTool("ok", () => "done");
    const since = new Date().toISOString();
    await rtA.executeProposal({ id: "pa", actions: [{ id: "x", type: "tool_call", tool: "ok", parameters: {} }] });
    await rtB.executeProposal({ id: "pb", actions: [{ id: "y", type: "tool_call", tool: "ok", parameters: {} }] });
    const all = await a.events.queryShared();
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
    expect([...new Set(all.map((e) => e.proposal_id))]).toEqual(["pa", "pb"]);
    for (let i = 1; i < all.length; i++) expect(all[i]!.prev_hash).toBe(all[i - 1]!.hash);
    expect((await a.events.queryShared({ proposal_id: "pb", action_id: "y", kinds: ["action_succeeded"] })).map((e) => e.proposal_id)).toEqual(["pb"]);
    expect(await a.events.countShared({ kinds: ["proposal_completed"] })).toBe(2);
    expect(await a.events.countShared({ since })).toBe(all.length);
    expect(await a.events.countShared({ until: since })).toBe(0);
    expect((await b.events.queryShared({ data_matches: { tool: "ok" }, order: "desc", limit: 1 }))[0]).toMatchObject({
      proposal_id: "pb",
      kind: "action_succeeded",
    });
    expect((await b.events.queryShared({ after_seq: all.length - 1 })).map((e) => e.seq)).toEqual([all.length]);

    // A runtime's own view follows the log: after its next proposal begins, it holds B's events too, and its feed got them in order.
    const feed = rtA.events.subscribe({ filter: { kinds: ["proposal_completed"] } });
    await rtA.executeProposal({ id: "pa2", actions: [] });
    expect(rtA.events.query({ kinds: ["proposal_completed"] }).map((e) => e.proposal_id)).toEqual(["pa", "pb", "pa2"]);
    expect((await feed.next()).value).toMatchObject({ proposal_id: "pb" });
    expect((await feed.next()).value).toMatchObject({ proposal_id: "pa2" });
    await feed.return!();

    // Events appended outside any proposal (a multi-agent run's) are written too, in the same chain.
    rtB.events.append({ kind: "agent_started", proposal_id: "run-1", timestamp: new Date().toISOString(), data: { agent: "a" } });
    await b.flush();
    expect((await a.events.queryShared({ proposal_id: "run-1" })).map((e) => e.kind)).toEqual(["agent_started"]);
    expect(await a.verifyChain()).toMatchObject({ ok: true, verified: all.length + (await a.events.countShared({ proposal_id: "pa2" })) + 1 });
  });

  it("finds an edited event and a removed tail", async () => {
    const [a, , url] = await twoStores("strict");
    const rt = new Runtime({ store: a });
    await rt.executeProposal({ id: "p", actions: [{ id: "w", type: "state_write", parameters: { key: "k", value: 1 } }] });
    const n = await a.events.countShared();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query("UPDATE car_events SET body = replace(body, '\"value\":1', '\"value\":2') WHERE kind = 'state_changed'");
      const edited = await a.verifyChain();
      expect(edited).toMatchObject({ ok: false, broken: { reason: expect.stringContaining("hash") } });
      await client.query("UPDATE car_events SET body = replace(body, '\"value\":2', '\"value\":1') WHERE kind = 'state_changed'");
      expect(await a.verifyChain()).toMatchObject({ ok: true, verified: n });
      await client.query("DELETE FROM car_events WHERE seq = $1", [n]);
      expect(await a.verifyChain()).toMatchObject({ ok: false, broken: { seq: n, reason: expect.stringContaining("removed from the end") } });
    } finally {
      await client.end();
    }
  });
});
