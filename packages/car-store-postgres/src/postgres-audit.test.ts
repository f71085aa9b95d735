/**
 * The audit trail's guarantees on PostgreSQL, with the database edited
 * through a second connection as an attacker with write access would:
 * direct writes are chained events written with their value; a hand-edited
 * `car_state`, a rewritten event and a truncated tail are each reported;
 * anchors name the database's location; rows from before seals are sealed
 * only when the log vouches for them; an agent's rate-limit slots survive
 * a restart; the transition record is checked key by key.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresBinDir, startPostgresCluster } from "@car/test-kit/postgres-cluster";
import type { PostgresCluster } from "@car/test-kit/postgres-cluster";
import { AgentSessions, borrowedStore, Runtime } from "@car/engine";
import { systemClock } from "@car/ir";
import { oneShotSql } from "../test/one-shot-sql.ts";
import type { Sql } from "../test/one-shot-sql.ts";
import { postgres } from "./index.ts";
import type { PostgresStore } from "./index.ts";

const installed = postgresBinDir() !== undefined;
if (!installed) console.warn("PostgreSQL is not installed (apt-get install postgresql): skipping the PostgreSQL audit tests");

let cluster: PostgresCluster;
let home: string;
const open: PostgresStore[] = [];
beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "car-pg-audit-"));
  if (installed) cluster = await startPostgresCluster();
});
afterAll(async () => {
  for (const store of open) await store.close();
  cluster?.stop();
  rmSync(home, { recursive: true, force: true });
});

let databases = 0;
async function fresh(): Promise<{ store: PostgresStore; url: string; sql: Sql }> {
  const url = cluster.createDatabase(`audit_${++databases}`);
  const store = postgres(url, { poolSize: 2, auditKeyFile: join(home, "audit.key") });
  open.push(store);
  await store.ready();
  const sql = oneShotSql(url);
  return { store, url, sql };
}

async function runProposals(store: PostgresStore, ids: string[]): Promise<void> {
  const rt = new Runtime({ store });
  for (const id of ids) await rt.executeProposal({ id, actions: [{ id: "w", type: "state_write", parameters: { key: `k-${id}`, value: id } }] });
}

describe.skipIf(!installed)("PostgreSQL audit trail", () => {
  it("a direct write appends its chained state_changed event with the value, and every event carries a MAC", async () => {
    const { store, sql } = await fresh();
    expect(statSync(join(home, "audit.key")).mode & 0o777).toBe(0o600);
    store.state.set("tenant:t1:seed", { n: 1 });
    await store.flush();
    const events = await store.events.queryShared({ kinds: ["state_changed"] });
    expect(events.map((e) => [e.proposal_id, e.data])).toEqual([[null, { key: "tenant:t1:seed", op: "set", value: { n: 1 }, version: 1 }]]);
    await runProposals(store, ["p1"]);
    expect((await sql("SELECT count(*)::int AS n FROM car_events WHERE mac IS NULL")).rows[0].n).toBe(0);
    expect(await store.verifyChain()).toMatchObject({ ok: true, keyed: true, state: { compared: true, keys: 2 } });
  });

  it("names the first key a hand edit of car_state changed", async () => {
    const { store, sql } = await fresh();
    await runProposals(store, ["p1", "p2"]);
    await sql("UPDATE car_state SET value = '\"forged\"' WHERE key = 'k-p2'");
    expect(await store.verifyChain()).toMatchObject({ ok: false, broken: { key: "k-p2", reason: expect.stringContaining('stored "forged"') } });
  });

  it("a rewritten event's MAC no longer matches; a truncated tail is caught against an anchor", async () => {
    const { store, sql } = await fresh();
    await runProposals(store, ["p1", "p2"]);
    const anchor = (await store.anchor())!;
    expect(anchor.database_id).toBe(await store.databaseId());
    expect(anchor.database).toBe(store.location);
    expect(store.location).toMatch(/^postgres:\/\/127\.0\.0\.1:\d+\/audit_\d+$/);
    const [first] = (await sql("SELECT seq, mac FROM car_events ORDER BY seq LIMIT 1")).rows;
    await sql("UPDATE car_events SET mac = $1 WHERE seq = $2", ["0".repeat(64), first.seq]);
    expect(await store.verifyChain()).toMatchObject({ ok: false, broken: { seq: Number(first.seq), reason: expect.stringContaining("MAC does not match") } });
    await sql("UPDATE car_events SET mac = $1 WHERE seq = $2", [first.mac, first.seq]);
    const cut = (await store.events.queryShared({ proposal_id: "p2" }))[0]!.seq;
    await sql("DELETE FROM car_events WHERE seq >= $1", [cut]);
    await sql("UPDATE car_log_head SET seq = $1, hash = (SELECT hash FROM car_events WHERE seq = $1) WHERE id = 1", [cut - 1]);
    await sql("DELETE FROM car_state WHERE key = 'k-p2'");
    // The proposals table and the transition record are checked against the log too: a thorough writer removes p2's rows as well.
    expect(await store.verifyChain()).toMatchObject({ ok: false, broken: { table: "proposals" } });
    await sql("DELETE FROM car_proposals WHERE proposal_id = 'p2'");
    expect(await store.verifyChain()).toMatchObject({ ok: false, broken: { table: "transitions" } });
    await sql("DELETE FROM car_transitions WHERE proposal_id = 'p2'");
    expect(await store.verifyChain()).toMatchObject({ ok: true });
    expect(await store.verifyChain({ anchors: [anchor] })).toMatchObject({ ok: false, broken: { reason: expect.stringContaining("rolled back") } });
    // Giving the database a new id does not slip past the anchor: it names the database's location too.
    await sql("UPDATE car_meta SET value = 'edited' WHERE key = 'database_id'");
    expect(await store.verifyChain({ anchors: [anchor] })).toMatchObject({
      ok: false,
      broken: { reason: expect.stringContaining(`with id ${anchor.database_id}, but it now says edited`) },
    });
    const foreign = { ...anchor, database_id: "other", database: "postgres://elsewhere:5432/other" };
    const other = { ...anchor, database_id: "edited", database: "postgres://elsewhere:5432/other" };
    expect(await store.verifyChain({ anchors: [foreign, other] })).toMatchObject({
      ok: false,
      broken: { reason: expect.stringContaining("at postgres://elsewhere:5432/other, but it was opened at") },
    });
  });

  it("seals rows from before seals on start when the log vouches for them; a hand-inserted one keeps them all refused", async () => {
    const { store, url, sql } = await fresh();
    await store.approvals.record({ fingerprint: "f1", decision: "approved", required_tier: "full_access", reviewer: "ops", decided_at: 1, expires_at: null });
    await store.postures.set("bot", "deny", null, 2);
    await sql("UPDATE car_approvals SET seal = NULL");
    await sql("UPDATE car_postures SET seal = NULL");
    const reopened = postgres(url, { poolSize: 2, auditKeyFile: join(home, "audit.key") });
    open.push(reopened);
    await reopened.ready();
    expect(await reopened.approvals.latest("f1", 5)).toMatchObject({ decision: "approved" });
    expect(await reopened.postures.resolve("bot", "read_only")).toBe("deny");
    expect(await reopened.verifyChain()).toMatchObject({ ok: true });

    await sql("UPDATE car_approvals SET seal = NULL");
    await sql("INSERT INTO car_postures (agent_id, tier, posture, updated_at) VALUES ('rogue', '*', 'always_allow', 3)");
    const third = postgres(url, { poolSize: 2, auditKeyFile: join(home, "audit.key") });
    open.push(third);
    await third.ready();
    await expect(third.approvals.latest("f1", 5)).rejects.toMatchObject({ code: "chain_broken" });
    await expect(third.postures.resolve("rogue", "full_access")).rejects.toMatchObject({ code: "chain_broken" });
  });

  it("an agent's rate-limit slots survive a restart (DECISIONS §21)", async () => {
    const { store, url } = await fresh();
    const limit = { max_calls: 2, interval_secs: 60 };
    const agents = new AgentSessions(systemClock, store.events);
    const rt = new Runtime({ store: borrowedStore(store), agent: agents.get("bot") });
    rt.registerTool({ name: "notify", rate_limit: limit }, () => "sent");
    await rt.executeProposal({
      actions: [
        { id: "a", type: "tool_call", tool: "notify" },
        { id: "b", type: "tool_call", tool: "notify", dependencies: ["a"] },
      ],
    });
    agents.persist("bot");
    await store.flush();
    const restarted = postgres(url, { poolSize: 2, auditKeyFile: join(home, "audit.key") });
    open.push(restarted);
    await restarted.ready();
    const again = new AgentSessions(systemClock, restarted.events);
    expect(again.get("bot").limiter.acquire("notify", limit, Date.now())).toBeGreaterThan(0);
    expect(again.get("other").limiter.acquire("notify", limit, Date.now())).toBe(0);
  });

  it("transitions whose row ids and log places cross between keys still verify: the record is compared key by key", async () => {
    const { store, url, sql } = await fresh();
    const rt = new Runtime({ store });
    // Holds the slow proposal's `car_proposals` row once its tool ran, so its commit numbers its transition, then waits before its log place.
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      rt.registerTool("hold", async () => {
        await holder.query("BEGIN");
        await holder.query("SELECT 1 FROM car_proposals WHERE proposal_id = 'slow' FOR UPDATE");
        return "held";
      });
      const slow = rt.executeProposal({
        id: "slow",
        actions: [
          { id: "h", type: "tool_call", tool: "hold" },
          { id: "w", type: "state_write", parameters: { key: "a", value: 1 }, depends_on: ["h"] },
        ],
      });
      const waiting = async (): Promise<number> =>
        (await sql("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rows[0].n;
      while ((await waiting()) === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      await runProposals(store, ["fast"]);
      await holder.query("COMMIT");
      expect((await slow).results.map((r) => r.status)).toEqual(["succeeded", "succeeded"]);
    } finally {
      await holder.end();
    }
    const record = (await sql("SELECT key FROM car_transitions ORDER BY id")).rows.map((r) => r.key);
    const logged = (await store.events.queryShared({ kinds: ["state_changed"] })).map((e) => e.data["key"]);
    expect(record).toEqual(["a", "k-fast"]);
    expect(logged).toEqual(["k-fast", "a"]);
    expect(await store.verifyChain()).toMatchObject({ ok: true });
    await sql("UPDATE car_transitions SET key = 'k-fast' WHERE key = 'a'");
    expect(await store.verifyChain()).toMatchObject({ ok: false, broken: { table: "transitions" } });
  });
});
