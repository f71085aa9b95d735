/**
 * Recovery keyed by run id on SQLite (DECISIONS §20), for the rows the
 * conformance suite cannot reach: a `proposals` row written before schema
 * version 7 names no run, and is still recovered (its intents read by time,
 * as that build did); a version-6 file gains the column on open with its
 * rows intact. Two runs of one proposal id are the store conformance
 * suite's check (store/intents.ts).
 */
import Database from "better-sqlite3";
import { manualClock } from "@car/ir";
import { Runtime } from "@car/engine";
import { tempDatabase } from "@car/test-kit/temp-database";
import type { TempDir } from "@car/test-kit/temp-database";
import { afterEach, beforeEach, expect, it } from "vitest";
import { MIGRATIONS, SCHEMA_VERSION } from "./schema.ts";
import { sqlite } from "./sqlite-store.ts";

const clock = manualClock(Date.parse("2026-03-01T00:00:00Z"));
let temp: TempDir;

beforeEach(() => {
  temp = tempDatabase();
});
afterEach(() => temp.remove());

/** Leaves proposal `p` executing with `a` dispatched (its tool never returns), as a process that stopped would; returns the run's id. */
async function leaveExecuting(): Promise<string> {
  const store = sqlite(temp.db, { clock });
  const rt = new Runtime({ store, clock });
  let called!: () => void;
  const reached = new Promise<void>((resolve) => (called = resolve));
  rt.registerTool("hang", () => {
    called();
    return new Promise(() => {});
  });
  void rt.executeProposal({ id: "p", actions: [{ id: "a", type: "tool_call", tool: "hang", parameters: {} }] });
  await reached;
  const run_id = store.events.query({ proposal_id: "p", kinds: ["proposal_received"] })[0]!.data["run_id"] as string;
  await store.close();
  return run_id;
}

it("a row that names its run is recovered with that run id on the result and the event", async () => {
  const run_id = await leaveExecuting();
  const store = sqlite(temp.db, { clock });
  try {
    expect(store.recover()).toEqual([{ proposal_id: "p", run_id, timestamp: "2026-03-01T00:00:00.000Z", dispatched: ["a"] }]);
    expect(store.events.query({ proposal_id: "p", kinds: ["proposal_interrupted"] })[0]!.data).toMatchObject({ run_id, dispatched: ["a"] });
  } finally {
    await store.close();
  }
});

it("a row from before version 7 (no run id) is still recovered, its intents read by time", async () => {
  await leaveExecuting();
  const raw = new Database(temp.db);
  raw.prepare("UPDATE proposals SET run_id = NULL").run();
  raw.close();
  const store = sqlite(temp.db, { clock });
  try {
    const [interrupted] = store.recover();
    expect(interrupted).toEqual({ proposal_id: "p", timestamp: "2026-03-01T00:00:00.000Z", dispatched: ["a"] });
    expect(store.events.query({ proposal_id: "p", kinds: ["proposal_interrupted"] })[0]!.data["run_id"]).toBeUndefined();
    expect(store.verifyChain()).toMatchObject({ ok: true });
  } finally {
    await store.close();
  }
});

it("opening a version-6 file adds the run id column; its rows keep what they held, with no run id", async () => {
  const old = new Database(temp.db);
  old.transaction(() => {
    for (const step of MIGRATIONS.slice(0, 6)) typeof step === "string" ? old.exec(step) : step(old);
  })();
  old.pragma("user_version = 6");
  old
    .prepare("INSERT INTO proposals (proposal_id, status, began_at, ended_at, owner_pid, owner) VALUES ('old', 'committed', ?, ?, 1, 'gone')")
    .run("2026-01-01T00:00:00.000Z", "2026-01-01T00:00:01.000Z");
  old.close();
  const store = sqlite(temp.db, { clock });
  await store.close();
  const db = new Database(temp.db, { readonly: true });
  try {
    expect(db.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    expect(db.prepare("SELECT proposal_id, run_id, status, began_at FROM proposals").all()).toEqual([
      { proposal_id: "old", run_id: null, status: "committed", began_at: "2026-01-01T00:00:00.000Z" },
    ]);
  } finally {
    db.close();
  }
});
