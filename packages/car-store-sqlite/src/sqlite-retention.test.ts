import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { manualClock } from "@car/ir";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type CarEvent, Runtime } from "@car/engine";
import { ChainVerifier } from "@car/engine/durable";
import { sqlite } from "./sqlite-store.ts";
import type { SqliteStore, SqliteStoreOptions } from "./sqlite-store.ts";
import { tempDatabase } from "@car/test-kit/temp-database";
import type { TempDir } from "@car/test-kit/temp-database";

let temp: TempDir;
const stores: SqliteStore[] = [];
const clock = manualClock(Date.parse("2026-03-01T00:00:00Z"));

beforeEach(() => {
  temp = tempDatabase();
});
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  temp.remove();
});

function open(options: SqliteStoreOptions = {}): SqliteStore {
  const store = sqlite(temp.db, { clock, ...options });
  stores.push(store);
  return store;
}

async function runProposals(store: SqliteStore, n: number, from = 0): Promise<void> {
  const rt = new Runtime({ store, clock });
  for (let i = from; i < from + n; i++) {
    clock.advance(1000);
    await rt.executeProposal({ id: `p${i}`, actions: [{ id: "w", type: "state_write", parameters: { key: "k", value: i } }] });
  }
}

it("archives old events past max_events, and the archive plus the retained log verify as one chain", async () => {
  const archive = join(temp.dir, "archive.jsonl");
  const store = open({ retention: { max_events: 20, mode: "archive", archive_path: archive } });
  await runProposals(store, 30);
  const retained = [...store.storedEvents()];
  expect(retained.length).toBeGreaterThanOrEqual(20);
  expect(retained.length).toBeLessThanOrEqual(22);
  const report = store.verifyChain();
  expect(report).toMatchObject({ ok: true, verified: retained.length });
  expect(store.checkpoints().length).toBeGreaterThan(0);
  expect(store.state.get("k")).toBe(29);

  const archived = readFileSync(archive, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as CarEvent);
  expect(archived[0]!.seq).toBe(1);
  expect(archived.at(-1)!.seq + 1).toBe(retained[0]!.seq);
  const whole = new ChainVerifier([], undefined);
  for (const event of [...archived, ...retained]) expect(whole.check({ event })).toBe(true);
  expect(statSync(archive).mode & 0o777).toBe(0o600);
});

it("truncates by age and anchors the rest on a signed checkpoint that survives a reopen", async () => {
  const store = open();
  await runProposals(store, 10);
  const before = store.events.count();
  const result = store.enforceRetention(clock.now(), { max_age_ms: 4_500, mode: "truncate" });
  expect(result.removed).toBeGreaterThan(0);
  expect(result.checkpoint?.checkpoint).toMatchObject({ mode: "truncate", archive_path: null, previous: null });
  expect(store.events.count()).toBe(before - result.removed);
  expect(store.events.query().every((e) => Date.parse(e.timestamp) >= clock.now() - 4_500)).toBe(true);
  await store.close();
  const again = open();
  expect(again.verifyChain()).toMatchObject({ ok: true, checkpoint: { seq: result.checkpoint!.checkpoint.seq } });
  // Appending after a trim keeps the chain whole; a second trim chains its checkpoint to the first.
  await runProposals(again, 3, 10);
  const second = again.enforceRetention(clock.now(), { max_events: 5, mode: "truncate" });
  expect(second.checkpoint?.checkpoint.previous).toBe(result.checkpoint!.signature);
  expect(again.verifyChain()).toMatchObject({ ok: true, verified: 5 });
});

it("refuses a forged or removed checkpoint", async () => {
  const store = open();
  await runProposals(store, 5);
  store.enforceRetention(clock.now(), { max_events: 6, mode: "truncate" });
  const raw = new Database(temp.db);
  try {
    const { id, body } = raw.prepare("SELECT id, body FROM checkpoints").get() as { id: number; body: string };
    raw.prepare("UPDATE checkpoints SET body = ? WHERE id = ?").run(
      body.replace(/"removed":(\d+)/, (_m, n: string) => `"removed":${Number(n) + 1}`),
      id,
    );
    expect(store.verifyChain()).toMatchObject({ ok: false, broken: { reason: "the checkpoint signature does not match" } });
    raw.prepare("DELETE FROM checkpoints").run();
    expect(store.verifyChain()).toMatchObject({ ok: false, broken: { reason: expect.stringContaining("genesis") } });
  } finally {
    raw.close();
  }
});

it("keeps the key in a separate file when asked; without it the checkpoints cannot be checked", async () => {
  const keyFile = join(temp.dir, "home", "audit.key");
  const store = open({ auditKeyFile: keyFile });
  await runProposals(store, 4);
  store.enforceRetention(clock.now(), { max_events: 3, mode: "truncate" });
  expect(statSync(keyFile).mode & 0o777).toBe(0o600);
  expect(store.verifyChain().ok).toBe(true);
  await store.close();
  expect(open().verifyChain()).toMatchObject({ ok: false, broken: { reason: expect.stringContaining("key is not available") } });
  expect(open({ auditKeyFile: keyFile }).verifyChain().ok).toBe(true);
});

it("rejects a policy without a bound, and archive mode without a path", () => {
  expect(() => open({ retention: { mode: "truncate" } })).toThrow(/max_events or max_age_ms/);
  expect(() => open({ retention: { max_events: 5, mode: "archive" } })).toThrow(/archive_path/);
});
