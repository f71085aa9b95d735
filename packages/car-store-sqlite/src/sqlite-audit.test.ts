/**
 * The audit trail's guarantees on SQLite, checked by editing the database
 * file through a second connection the way an attacker with write access
 * would: direct writes are chained events; a hand-edited state table, a
 * rewrite that recomputed the hashes, a truncated tail and a rolled-back
 * file are each reported.
 */
import { copyFileSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type CarEvent, Runtime } from "@car/engine";
import { linkEvent } from "@car/engine/durable";
import { SELECT_COLUMNS, chainAnchor, eventFromRow } from "./event-row.ts";
import type { EventRow } from "./event-row.ts";
import { sqlite } from "./sqlite-store.ts";
import type { SqliteStore } from "./sqlite-store.ts";
import { tempDatabase } from "@car/test-kit/temp-database";
import type { TempDir } from "@car/test-kit/temp-database";

let temp: TempDir;
let keyFile: string;
const open: SqliteStore[] = [];

function store(options: { keyed?: boolean; path?: string } = {}): SqliteStore {
  const s = sqlite(options.path ?? temp.db, options.keyed === false ? {} : { auditKeyFile: keyFile });
  open.push(s);
  return s;
}

async function runProposals(s: SqliteStore, ids: string[]): Promise<void> {
  const rt = new Runtime({ store: s });
  rt.registerTool("t", () => ({ ok: true }));
  for (const id of ids) {
    await rt.executeProposal({
      id,
      actions: [
        { id: "a", type: "tool_call", tool: "t", parameters: { q: id } },
        { id: "w", type: "state_write", parameters: { key: `k-${id}`, value: id } },
      ],
    });
  }
}

/** Rewrites event `seq`'s data with `edit` and recomputes every later hash and the recorded head, as someone without the key would. */
function rehashFrom(raw: Database.Database, seq: number, edit: (event: CarEvent) => void): void {
  const anchor = chainAnchor(raw);
  const rows = raw.prepare(`SELECT ${SELECT_COLUMNS} FROM events WHERE seq >= ? ORDER BY seq`).all(seq) as EventRow[];
  let prev = rows[0]!.prev?.toString("hex") ?? anchor.hash;
  const update = raw.prepare("UPDATE events SET data = ?, hash = ? WHERE seq = ?");
  for (const row of rows) {
    const { event } = eventFromRow(row, anchor);
    if (event.seq === seq) edit(event);
    const data = linkEvent(event, prev);
    update.run(data, Buffer.from(event.hash!, "hex"), event.seq);
    prev = event.hash!;
  }
  raw.prepare("UPDATE chain_head SET hash = ? WHERE id = 1").run(prev);
}

beforeEach(() => {
  temp = tempDatabase();
  keyFile = join(temp.dir, "home", "audit.key");
});
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  temp.remove();
});

describe("direct writes are on the record", () => {
  it("state.set and delete append a chained state_changed event in the same transaction", async () => {
    const s = store();
    s.state.set("seed", { n: 1 });
    s.state.set("gone", true);
    s.state.delete("gone");
    const direct = s.events.query({ kinds: ["state_changed"] });
    expect(direct.map((e) => [e.proposal_id, e.data])).toEqual([
      [null, { key: "seed", op: "set", value: { n: 1 }, version: 1 }],
      [null, { key: "gone", op: "set", value: true, version: 1 }],
      [null, { key: "gone", op: "delete", version: 2 }],
    ]);
    expect(direct.every((e) => typeof e.hash === "string")).toBe(true);
    expect(s.verifyChain()).toMatchObject({ ok: true, state: { compared: true, keys: 1 } });
  });

  it("a write whose transaction fails leaves neither the value nor its event", async () => {
    const s = store();
    const raw = new Database(temp.db);
    raw.exec("CREATE TRIGGER refuse BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'no'); END");
    expect(() => s.state.set("k", 1)).toThrow();
    raw.exec("DROP TRIGGER refuse");
    raw.close();
    expect(s.state.exists("k")).toBe(false);
    expect(s.events.count()).toBe(0);
    expect(s.verifyChain()).toMatchObject({ ok: true, verified: 0 });
  });
});

describe("verification replays the log against the stored state", () => {
  it("names the first key a hand edit of the state table changed, added or removed", async () => {
    const s = store();
    await runProposals(s, ["p1", "p2"]);
    expect(s.verifyChain()).toMatchObject({ ok: true, state: { compared: true, keys: 2 } });
    const raw = new Database(temp.db);
    raw.prepare("UPDATE state SET value = ? WHERE key = 'k-p2'").run('"forged"');
    expect(s.verifyChain()).toMatchObject({ ok: false, broken: { key: "k-p2", reason: expect.stringContaining('stored "forged", the log says "p2"') } });
    raw.prepare("UPDATE state SET value = ? WHERE key = 'k-p2'").run('"p2"');
    raw.prepare("INSERT INTO state (key, value, version, ord) VALUES ('a-extra', '1', 1, 99)").run();
    expect(s.verifyChain()).toMatchObject({ ok: false, broken: { key: "a-extra", reason: expect.stringContaining("the log says absent") } });
    raw.prepare("DELETE FROM state WHERE key IN ('a-extra', 'k-p1')").run();
    expect(s.verifyChain()).toMatchObject({ ok: false, broken: { key: "k-p1" } });
    raw.close();
  });
});

describe("the keyed chain", () => {
  it("creates the key on first use, readable by the owner only", () => {
    store();
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
  });

  it("a rewrite that recomputed every hash passes without the key and is caught with it", async () => {
    const s = store();
    await runProposals(s, ["p1", "p2"]);
    const target = s.events.query({ kinds: ["action_succeeded"] })[0]!.seq;
    const raw = new Database(temp.db);
    rehashFrom(raw, target, (e) => {
      e.data["duration_ms"] = 12345;
    });
    raw.close();
    const unkeyed = store({ keyed: false });
    expect(unkeyed.verifyChain()).toMatchObject({ ok: true, keyed: false });
    expect(s.verifyChain()).toMatchObject({ ok: false, broken: { seq: target, reason: expect.stringContaining("MAC does not match") } });
  });

  it("with the key, an event without a MAC is a break wherever it is: every MAC stripped and the chain rehashed fails at the first event", async () => {
    const s = store();
    await runProposals(s, ["p1", "p2"]);
    expect(s.verifyChain()).toMatchObject({ ok: true, keyed: true });
    const raw = new Database(temp.db);
    const target = s.events.query({ kinds: ["action_succeeded"] })[0]!.seq;
    raw.prepare("UPDATE events SET mac = NULL").run();
    rehashFrom(raw, target, (e) => {
      e.data["duration_ms"] = 12345;
    });
    raw.close();
    // Without the key the rewrite is a consistent hash chain; with it, the first event already fails.
    expect(store({ keyed: false }).verifyChain()).toMatchObject({ ok: true, keyed: false });
    expect(s.verifyChain()).toMatchObject({
      ok: false,
      verified: 0,
      broken: { seq: 1, reason: expect.stringContaining("carries no MAC, and an audit key exists") },
    });
  });

  it("a log written before the database was keyed verifies only without the key", async () => {
    const before = store({ keyed: false });
    await runProposals(before, ["old"]);
    const s = store();
    await runProposals(s, ["new"]);
    expect(s.verifyChain()).toMatchObject({ ok: false, broken: { seq: 1, reason: expect.stringContaining("no MAC") } });
    expect(store({ keyed: false }).verifyChain()).toMatchObject({ ok: true, keyed: false });
  });
});

describe("anchors", () => {
  it("a truncated tail with a consistent recorded head is caught only against an anchor", async () => {
    const s = store();
    await runProposals(s, ["p1", "p2"]);
    const anchor = s.anchor()!;
    expect(anchor).toMatchObject({ database_id: s.databaseId, seq: s.events.count() });
    const raw = new Database(temp.db);
    const cut = s.events.query({ proposal_id: "p2" })[0]!.seq;
    raw.prepare("DELETE FROM events WHERE seq >= ?").run(cut);
    raw.prepare("UPDATE chain_head SET seq = ?, hash = (SELECT lower(hex(hash)) FROM events WHERE seq = ?) WHERE id = 1").run(cut - 1, cut - 1);
    raw.prepare("DELETE FROM state WHERE key = 'k-p2'").run();
    // A thorough writer also removes what the other tables say of p2 (each is checked against the log).
    expect(s.verifyChain()).toMatchObject({ ok: false, broken: { table: "proposals" } });
    raw.prepare("DELETE FROM proposals WHERE proposal_id = 'p2'").run();
    expect(s.verifyChain()).toMatchObject({ ok: false, broken: { table: "transitions" } });
    raw.prepare("DELETE FROM transitions WHERE proposal_id = 'p2'").run();
    raw.close();
    expect(s.verifyChain()).toMatchObject({ ok: true });
    expect(s.verifyChain({ anchors: [anchor] })).toMatchObject({
      ok: false,
      broken: { reason: expect.stringContaining("events removed from the end, or the database was rolled back") },
    });
  });

  it("a database file restored from an older copy and written again is caught against the newer anchor", async () => {
    const s = store();
    await runProposals(s, ["p1"]);
    const early = s.anchor()!;
    await s.close();
    copyFileSync(temp.db, `${temp.db}.bak`);
    const live = store();
    await runProposals(live, ["p2"]);
    const later = live.anchor()!;
    await live.close();
    copyFileSync(`${temp.db}.bak`, temp.db);
    const restored = store();
    expect(restored.verifyChain({ anchors: [early, later] })).toMatchObject({ ok: false, broken: { reason: expect.stringContaining("rolled back") } });
    await runProposals(restored, ["p3", "p4"]);
    expect(restored.verifyChain({ anchors: [early] })).toMatchObject({ ok: true, anchors: { checked: 1 } });
    expect(restored.verifyChain({ anchors: [early, later] })).toMatchObject({
      ok: false,
      broken: { seq: later.seq, reason: expect.stringContaining("not the one anchored") },
    });
  });

  it("anchors of another database are ignored once this one has its own", async () => {
    const s = store();
    await runProposals(s, ["p1"]);
    const own = s.anchor()!;
    expect(own.database).toBe(realpathSync(temp.db));
    const foreign = { ...own, database_id: "other", database: "/elsewhere/other.db", seq: 999 };
    expect(s.verifyChain({ anchors: [own, foreign] })).toMatchObject({ ok: true, anchors: { checked: 1 } });
  });

  it("binds the file's identity outside it: an edited id is a break, an anchor file with no entry for this database is counted as none", async () => {
    const s = store();
    await runProposals(s, ["p1", "p2"]);
    const own = s.anchor()!;
    const foreign = { ...own, database_id: "other", database: "/elsewhere/other.db" };
    expect(s.verifyChain({ anchors: [foreign] })).toMatchObject({ ok: true, anchors: { checked: 0, newest: null } });
    await s.close();
    // Truncate, fix the state and the tables, and give the file a new id: the anchor still names this path.
    const raw = new Database(temp.db);
    const cut = raw.prepare("SELECT min(seq) FROM events WHERE proposal_id = 'p2'").pluck().get() as number;
    raw.prepare("DELETE FROM events WHERE seq >= ?").run(cut);
    raw.prepare("UPDATE chain_head SET seq = ?, hash = (SELECT lower(hex(hash)) FROM events WHERE seq = ?) WHERE id = 1").run(cut - 1, cut - 1);
    raw.prepare("DELETE FROM state WHERE key = 'k-p2'").run();
    raw.prepare("DELETE FROM proposals WHERE proposal_id = 'p2'").run();
    raw.prepare("DELETE FROM transitions WHERE proposal_id = 'p2'").run();
    raw.prepare("UPDATE meta SET value = 'edited' WHERE key = 'database_id'").run();
    raw.close();
    const reopened = store();
    expect(reopened.verifyChain()).toMatchObject({ ok: true });
    expect(reopened.verifyChain({ anchors: [own] })).toMatchObject({
      ok: false,
      broken: { reason: expect.stringContaining(`with id ${own.database_id}, but it now says edited`) },
    });
  });
});

describe("rows written before rows had seals", () => {
  const legacy = async (forge: boolean): Promise<void> => {
    const s = store();
    await s.approvals.record({ fingerprint: "f1", decision: "approved", required_tier: "full_access", reviewer: "ops", decided_at: 1, expires_at: null });
    s.postures.set("bot", "deny", null, 2);
    await s.close();
    // As an earlier version left them: no seals. And perhaps a row slipped in by hand.
    const raw = new Database(temp.db);
    raw.exec("UPDATE approvals SET seal = NULL; UPDATE postures SET seal = NULL");
    if (forge) raw.prepare("INSERT INTO postures (agent_id, tier, posture, updated_at) VALUES ('rogue', '*', 'always_allow', 3)").run();
    raw.close();
  };

  it("are sealed on open when the whole log vouches for them, and honoured", async () => {
    await legacy(false);
    const s = store();
    expect(await s.approvals.latest("f1", 5)).toMatchObject({ decision: "approved" });
    expect(s.postures.resolve("bot", "read_only")).toBe("deny");
    expect(s.verifyChain()).toMatchObject({ ok: true });
  });

  it("stay unsealed, and refused, when a row the log does not vouch for is among them", async () => {
    await legacy(true);
    const s = store();
    await expect(s.approvals.latest("f1", 5)).rejects.toMatchObject({ code: "chain_broken" });
    expect(() => s.postures.resolve("rogue", "full_access")).toThrow(expect.objectContaining({ code: "chain_broken" }));
    expect(s.verifyChain()).toMatchObject({ ok: false, broken: { table: "approvals" } });
  });
});
