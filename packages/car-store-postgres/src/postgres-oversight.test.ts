/**
 * Oversight shared between servers on a real PostgreSQL cluster: two
 * `PostgresOversight`s on one database (two servers), a third connection
 * acting as anyone with database access. The first decision to land wins
 * and the other is refused; a wake-up only makes a server read again; the
 * listener comes back after its connection is killed and says so; a gone
 * server's intents and subscribers are swept; payloads stay under
 * PostgreSQL's limit; and a message that is not MAC'd under the audit key
 * is dropped, whatever it holds.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPostgresCluster, type PostgresCluster } from "@car/test-kit/postgres-cluster";
import type { OversightWakeups, SupervisionDecision } from "@car/engine";
import { loadOrCreateKeyFile } from "@car/engine/durable";
import { postgres, type PostgresStore } from "./index.ts";
import { OVERSIGHT_LOCK_CLASS } from "./migrations.ts";
import { decodeMessage, encodeMessage, MAX_PAYLOAD_BYTES } from "./oversight-messages.ts";
import type { PostgresOversight } from "./postgres-oversight.ts";

let cluster: PostgresCluster;
let home: string;
const stores: PostgresStore[] = [];
const oversights: PostgresOversight[] = [];
beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "car-pg-oversight-"));
  cluster = await startPostgresCluster();
});
afterAll(async () => {
  for (const o of oversights) await o.close();
  for (const s of stores) await s.close();
  cluster?.stop();
  rmSync(home, { recursive: true, force: true });
});

/** What a server is told, as it arrives. */
function recorder(): OversightWakeups & { log: string[] } {
  const log: string[] = [];
  return {
    log,
    intentParked: (id) => log.push(`parked ${id}`),
    intentDecided: (id) => log.push(`decided ${id}`),
    approvalRecorded: (fp) => log.push(`approval ${fp}`),
    hostEvent: (e) => log.push(`host ${JSON.stringify(e)}`),
    subscribersChanged: () => log.push("subscribers"),
    resync: () => log.push("resync"),
  };
}

let databases = 0;
/** Two servers on a fresh database, sharing one audit key, and a raw connection to it. */
async function twoServers() {
  const url = cluster.createDatabase(`oversight_${++databases}`);
  const keyFile = join(home, "audit.key");
  const server = async () => {
    const store = postgres(url, { auditKeyFile: keyFile, poolSize: 3 });
    stores.push(store);
    await store.ready();
    const oversight = store.sharedOversight();
    oversights.push(oversight);
    const told = recorder();
    await oversight.start(told);
    return { store, oversight, told };
  };
  const a = await server();
  const b = await server();
  const raw = new pg.Client({ connectionString: url });
  await raw.connect();
  return { a, b, raw, url, key: loadOrCreateKeyFile(keyFile) };
}

const until = async (test: () => boolean, ms = 5000): Promise<void> => {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error("condition not reached");
    await new Promise((r) => setTimeout(r, 10));
  }
};

const intent = (id: string) => ({ id, agent_id: "bot", intent: { id, proposal_id: "p", actions: [] } });
const allow: SupervisionDecision = { kind: "allow", reviewer: "conn:sup" };
const timeout: SupervisionDecision = { kind: "deny", reviewer: "timeout", reason: "no supervisor decided" };

describe("PostgresOversight", () => {
  it("one decision wins: the supervisor's on another server or the parking server's own timeout, never both", async () => {
    const { a, b, raw } = await twoServers();
    for (let i = 0; i < 8; i++) {
      const id = `race-${i}`;
      await a.oversight.park(intent(id), Date.now() + 60_000);
      await until(() => b.told.log.includes(`parked ${id}`));
      const [fromB, fromA] = await Promise.all([b.oversight.decide(id, allow), a.oversight.decide(id, timeout, { atDeadline: true })]);
      expect([fromB, fromA].filter((r) => r !== undefined)).toHaveLength(1);
      const stored = await a.oversight.read(id);
      expect(stored?.decision).toEqual(fromB !== undefined ? allow : timeout);
      expect((await b.oversight.pending()).map((r) => r.id)).not.toContain(id);
    }
    // Past its deadline, only the parking server may still decide it.
    await a.oversight.park(intent("late"), Date.now() - 1);
    expect(await b.oversight.decide("late", allow)).toBeUndefined();
    expect(await a.oversight.decide("late", timeout, { atDeadline: true })).toMatchObject({ decision: timeout });
    await raw.end();
  });

  it("reads a decision written outside CAR as a denial by `server`, and will not decide a row it did not seal", async () => {
    const { a, b, raw } = await twoServers();
    await a.oversight.park(intent("edited"), Date.now() + 60_000);
    await raw.query(`UPDATE car_supervision_intents SET decision = '{"kind":"allow","reviewer":"mallory"}' WHERE id = 'edited'`);
    expect((await a.oversight.read("edited"))?.decision).toMatchObject({ kind: "deny", reviewer: "server" });
    await raw.query(
      `INSERT INTO car_supervision_intents (id, server_id, intent, deadline, seal) VALUES ('planted', $1, '{}', now() + interval '1 hour', 'x')`,
      [a.oversight.serverId],
    );
    expect(await b.oversight.decide("planted", allow)).toBeUndefined();
    expect((await b.oversight.pending()).map((r) => r.id)).not.toContain("planted");
    await raw.end();
  });

  it("drops a NOTIFY that is not MAC'd under the audit key; a real wake-up arrives", async () => {
    const { a, b, raw } = await twoServers();
    const before = b.told.log.length;
    await raw.query(`SELECT pg_notify('car_oversight', $1)`, [JSON.stringify({ k: "decided", id: "x", s: "1" })]);
    await raw.query(`SELECT pg_notify('car_oversight', $1)`, [JSON.stringify({ k: "host", event: { kind: "agent_registered" }, s: "1", m: "0".repeat(64) })]);
    await a.oversight.park(intent("real"), Date.now() + 60_000);
    await until(() => b.told.log.includes("parked real"));
    expect(b.told.log.slice(before)).toEqual(["parked real"]);
    await raw.end();
  });

  it("wakes every server when an approval is recorded in the ledger, whoever records it", async () => {
    const { a, b, raw } = await twoServers();
    await a.store.approvals.record({
      fingerprint: "f".repeat(64),
      required_tier: "full_access",
      decision: "approved",
      reviewer: "ops",
      decided_at: Date.now(),
      expires_at: null,
    });
    await until(() => a.told.log.includes(`approval ${"f".repeat(64)}`) && b.told.log.includes(`approval ${"f".repeat(64)}`));
    await raw.end();
  });

  it("listens again after its connection is killed, registers its subscribers again, and asks for a resync", async () => {
    const { a, b, raw } = await twoServers();
    await a.oversight.setSubscriber({ subscriber_id: "sup-1", kind: "supervision", filter: { tools: ["deploy"] } });
    const { rows } = await raw.query<{ pid: number }>(
      "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = $1::bigint::oid AND objid = $2::bigint::oid AND granted",
      [OVERSIGHT_LOCK_CLASS, Number(a.oversight.serverId)],
    );
    expect(rows).toHaveLength(1);
    // Meanwhile a sweep from another server could remove A's subscriber; it comes back with A's listener.
    await raw.query("SELECT pg_terminate_backend($1)", [rows[0]!.pid]);
    await raw.query("DELETE FROM car_oversight_subscribers WHERE server_id = $1", [a.oversight.serverId]);
    await until(() => a.told.log.includes("resync"));
    expect((await b.oversight.subscribers()).map((s) => s.subscriber_id)).toContain("sup-1");
    await b.oversight.park(intent("after"), Date.now() + 60_000);
    await until(() => a.told.log.includes("parked after"));
    await raw.end();
  });

  it("lists every server's approval waits, but not a row planted outside CAR", async () => {
    const { a, b, raw } = await twoServers();
    const wait = {
      id: "wait-a-1",
      fingerprint: "f".repeat(64),
      required: "full_access" as const,
      granted: "sandbox_edit" as const,
      tool: "send_email",
      parameter_keys: ["to"],
      action_id: "s",
      proposal_id: "p",
      run_id: "r",
      session_id: null,
      asked_by: "agent:bot",
      created_at: 1,
      deadline: 2,
    };
    await a.oversight.addWait(wait);
    await raw.query(`INSERT INTO car_approval_waits (server_id, wait_id, body, seal) VALUES ($1, 'planted', $2, 'x')`, [
      a.oversight.serverId,
      JSON.stringify({ ...wait, id: "planted", tool: "read_file" }),
    ]);
    expect(await b.oversight.waits()).toEqual([wait]);
    await a.oversight.removeWait(wait.id);
    expect(await b.oversight.waits()).toEqual([]);
    await raw.end();
  });

  it("sweeps the subscribers and waiting intents of a server that is gone", async () => {
    const { b, raw } = await twoServers();
    // Server 12345's listener holds no lock: it is gone.
    await raw.query(`INSERT INTO car_oversight_subscribers VALUES ('12345', 'sup', 'supervision', '{}')`);
    await raw.query(`INSERT INTO car_approval_waits (server_id, wait_id, body, seal) VALUES ('12345', 'w', '{}', 'x')`);
    await raw.query(
      `INSERT INTO car_supervision_intents (id, server_id, intent, deadline, seal) VALUES ('orphan', '12345', '{}', now() + interval '1 hour', 'x')`,
    );
    expect((await b.oversight.subscribers()).map((s) => s.server_id)).not.toContain("12345");
    expect((await raw.query("SELECT count(*)::int AS n FROM car_supervision_intents WHERE id = 'orphan'")).rows[0].n).toBe(0);
    expect((await raw.query("SELECT count(*)::int AS n FROM car_approval_waits WHERE server_id = '12345'")).rows[0].n).toBe(0);
    await raw.end();
  });
});

describe("oversight messages", () => {
  const key = { key: Buffer.alloc(32, 7), id: "k" } as never;

  it("decodes what it encoded under the same key, and nothing that is not MAC'd under it", () => {
    const message = fc.oneof(
      fc.record({ k: fc.constant("parked" as const), id: fc.string({ maxLength: 80 }) }),
      fc.record({ k: fc.constant("decided" as const), id: fc.string({ maxLength: 80 }) }),
      fc.record({ k: fc.constant("approval" as const), fp: fc.string({ maxLength: 80 }) }),
      fc.record({ k: fc.constant("host" as const), event: fc.dictionary(fc.string({ maxLength: 10 }), fc.string({ maxLength: 40 })) }),
    );
    fc.assert(
      fc.property(message, fc.string({ maxLength: 12 }), (m, sender) => {
        const text = encodeMessage(key, sender, m)!;
        expect(decodeMessage(key, text)).toEqual({ ...m, s: sender });
        expect(decodeMessage({ key: Buffer.alloc(32, 8), id: "other" } as never, text)).toBeUndefined();
        expect(decodeMessage(key, encodeMessage(undefined, sender, m)!)).toBeUndefined();
      }),
    );
  });

  it("never throws on any payload", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.jsonValue().map((v) => JSON.stringify(v)),
        ),
        (payload) => {
          decodeMessage(key, payload);
          decodeMessage(undefined, payload);
        },
      ),
    );
  });

  it("keeps every payload under PostgreSQL's limit: a large host event is trimmed to its ids, a large fingerprint is not sent", () => {
    const event = { kind: "approval_requested", at: "2026-01-01T00:00:00Z", wait_id: "w-1", tool: "t".repeat(9000) };
    const text = encodeMessage(key, "1", { k: "host", event })!;
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_PAYLOAD_BYTES);
    expect(decodeMessage(key, text)).toMatchObject({ event: { kind: "approval_requested", wait_id: "w-1", truncated: true } });
    expect(encodeMessage(key, "ledger", { k: "approval", fp: "f".repeat(9000) })).toBeUndefined();
  });
});
