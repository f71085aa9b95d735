/**
 * Opening a schema-version-2 database file (events stored whole in `body`,
 * hex hashes) with this build: it is migrated to the lean row on open, in
 * one transaction, and its events, state, chain (MACs, retention checkpoint,
 * recorded head) and retention still hold. The version-2 file is built on
 * disk through the shipped version-1 and version-2 migration SQL, its rows
 * written the way the version-2 log wrote them.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { manualClock } from "@car/ir";
import { afterEach, beforeEach, expect, it } from "vitest";
import { Runtime } from "@car/engine";
import { canonicalEventText, type UnhashedEvent } from "@car/engine/durable";
import { MIGRATIONS, SCHEMA_VERSION } from "./schema.ts";
import { sqlite } from "./sqlite-store.ts";
import type { SqliteStore } from "./sqlite-store.ts";
import { tempDatabase } from "@car/test-kit/temp-database";
import type { TempDir } from "@car/test-kit/temp-database";

const clock = manualClock(Date.parse("2026-03-01T00:00:00Z"));
/** Tables whose rows the lean format left as they were: copied from the source database. */
const UNCHANGED = ["meta", "chain_head", "checkpoints", "state", "transitions", "proposals", "approvals", "revocations", "postures"];

let temp: TempDir;
let keyFile: string;
const stores: SqliteStore[] = [];

beforeEach(() => {
  temp = tempDatabase();
  keyFile = join(temp.dir, "audit.key");
});
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  temp.remove();
});

function open(path: string, options: Parameters<typeof sqlite>[1] = {}): SqliteStore {
  const store = sqlite(path, { clock, auditKeyFile: keyFile, ...options });
  stores.push(store);
  return store;
}

async function runProposals(store: SqliteStore, from: number, n: number): Promise<void> {
  const rt = new Runtime({ store, clock });
  rt.registerTool("echo", (params) => ({ echoed: params["q"] }));
  for (let i = from; i < from + n; i++) {
    clock.advance(1000);
    await rt.executeProposal({
      id: `p${i}`,
      actions: [
        { id: "w", type: "state_write", parameters: { key: `k${i % 3}`, value: { n: i, text: 'ü\u2028"' } } },
        { id: "t", type: "tool_call", tool: "echo", parameters: { q: `q${i}` }, depends_on: ["w"] },
      ],
    });
  }
}

/**
 * A version-2 file at `path` holding what `source` holds: the shipped SQL of
 * versions 1 and 2, the unchanged tables copied, and each event as the
 * version-2 log stored it (its canonical text in `body`, hex hash and MAC).
 */
function writeVersion2(source: SqliteStore, sourcePath: string, path: string): void {
  const old = new Database(path);
  for (const step of MIGRATIONS.slice(0, 2)) old.exec(step as string);
  old.pragma("user_version = 2");
  old.prepare("ATTACH DATABASE ? AS source").run(sourcePath);
  for (const table of UNCHANGED) {
    // The version-2 columns only: later versions added some (the row seals).
    const columns = (old.prepare(`SELECT name FROM pragma_table_info('${table}')`).pluck().all() as string[]).join(", ");
    old.exec(`INSERT INTO main.${table} (${columns}) SELECT ${columns} FROM source.${table}`);
  }
  old.exec("DETACH DATABASE source");
  const insert = old.prepare("INSERT INTO events (seq, kind, proposal_id, action_id, ts, body, hash, mac) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  for (const { event, mac } of source.events.storedRows())
    insert.run(
      event.seq,
      event.kind,
      event.proposal_id,
      event.action_id ?? null,
      Date.parse(event.timestamp),
      canonicalEventText(event as UnhashedEvent),
      event.hash,
      mac,
    );
  old.close();
}

/** A keyed store with 12 proposals and a retention checkpoint at `<name>.db`, and its version-2 copy at `<name>-v2.db`. */
async function version2Database(name = "car"): Promise<{ path: string; events: unknown[]; state: unknown }> {
  const sourcePath = join(temp.dir, `${name}.db`);
  const source = open(sourcePath, { retention: { max_events: 40, mode: "truncate" } });
  await runProposals(source, 0, 12);
  source.events.append({ kind: "custom_note", proposal_id: null, timestamp: "2026-03-01T00:00:00+01:00", data: { note: "not ISO" } });
  expect(source.checkpoints().length).toBeGreaterThan(0);
  expect(source.verifyChain()).toMatchObject({ ok: true, keyed: true });
  const path = join(temp.dir, `${name}-v2.db`);
  writeVersion2(source, sourcePath, path);
  return { path, events: source.events.query(), state: source.state.storedSnapshot() };
}

const userVersion = (path: string): number => {
  const db = new Database(path, { readonly: true });
  const v = db.pragma("user_version", { simple: true }) as number;
  db.close();
  return v;
};

it("migrates a version-2 file on open: same events, state and chain, and it keeps running and trimming", async () => {
  const { path, events, state } = await version2Database();
  expect(userVersion(path)).toBe(2);

  const migrated = open(path, { retention: { max_events: 40, mode: "truncate" } });
  expect(userVersion(path)).toBe(SCHEMA_VERSION);
  expect(migrated.events.query()).toEqual(events);
  expect(migrated.state.storedSnapshot()).toEqual(state);
  const report = migrated.verifyChain();
  expect(report).toMatchObject({ ok: true, keyed: true, verified: events.length, checkpoint: { seq: (events[0] as { seq: number }).seq - 1 } });

  const checkpoints = migrated.checkpoints().length;
  await runProposals(migrated, 12, 12);
  expect(migrated.checkpoints().length).toBeGreaterThan(checkpoints);
  expect(migrated.verifyChain()).toMatchObject({ ok: true, keyed: true });
  expect(migrated.state.get("k2")).toEqual({ n: 23, text: 'ü\u2028"' });
});

it("does not launder an edit made before the migration: a body edit that keeps its JSON meaning, and an edited column", async () => {
  const { path, events } = await version2Database();
  const [, second, third] = events as { seq: number }[];
  const raw = new Database(path);
  const body = raw.prepare("SELECT body FROM events WHERE seq = ?").pluck().get(second!.seq) as string;
  raw.prepare("UPDATE events SET body = ? WHERE seq = ?").run(body.replace('"data":{', '"data": {'), second!.seq);
  raw.close();
  expect(open(path).verifyChain()).toMatchObject({ ok: false, broken: { seq: second!.seq } });
  for (const s of stores.splice(0)) await s.close();

  const again = await version2Database("again");
  const raw2 = new Database(again.path);
  raw2.prepare("UPDATE events SET kind = 'forged' WHERE seq = ?").run(third!.seq);
  raw2.close();
  expect(open(again.path).verifyChain()).toMatchObject({ ok: false, broken: { seq: third!.seq } });
});

it("a migration that fails leaves the version-2 file as it was", async () => {
  const { path } = await version2Database();
  const raw = new Database(path);
  // The name the migration renames the old table to is taken: its first step fails.
  raw.exec("CREATE TABLE events_v2 (x INTEGER)");
  const rows = raw.prepare("SELECT count(*) FROM events").pluck().get();
  raw.close();
  expect(() => open(path)).toThrow(/cannot prepare the database/);
  expect(userVersion(path)).toBe(2);
  const after = new Database(path, { readonly: true });
  expect(after.prepare("SELECT count(*) FROM events").pluck().get()).toBe(rows);
  expect(after.prepare("SELECT body FROM events LIMIT 1").pluck().get()).toEqual(expect.stringContaining('"prev_hash"'));
  after.close();
});
