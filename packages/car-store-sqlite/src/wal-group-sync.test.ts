/**
 * Group commit: what waits for which sync, what a failed sync stops, and a
 * file store running concurrent proposals on it. The syncs are real
 * `fdatasync`s of a real WAL file, except where a test holds one open to see
 * what waits for it.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { afterEach, beforeEach, expect, it } from "vitest";
import { isCarError } from "@car/ir";
import { type ProposalCommit, Runtime } from "@car/engine";
import { tempDatabase } from "@car/test-kit/temp-database";
import type { TempDir } from "@car/test-kit/temp-database";
import { sqlite } from "./sqlite-store.ts";
import { type SyncFile, WalGroupSync } from "./wal-group-sync.ts";

/** A commit with nothing in it: what the group-commit tests send to see how a commit is answered. */
const EMPTY_COMMIT: ProposalCommit = {
  proposal_id: "none",
  run_id: "run-none",
  outcome: "rolled_back",
  mutations: [],
  reads: [],
  assumptions: [],
  events: [],
};

let temp: TempDir;
beforeEach(() => {
  temp = tempDatabase();
});
afterEach(() => temp.remove());

/** A sync the test finishes by hand, counting the ones started. */
function heldSyncs(): { syncFile: SyncFile; started: () => number; finish: (error?: NodeJS.ErrnoException) => void } {
  const waiting: ((error: NodeJS.ErrnoException | null) => void)[] = [];
  let started = 0;
  return {
    syncFile: (_fd, done) => {
      started++;
      waiting.push(done);
    },
    started: () => started,
    finish: (error) => waiting.shift()!(error ?? null),
  };
}

const settled = async (p: Promise<unknown>): Promise<boolean> => {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((r) => setImmediate(r));
  return done;
};

it("answers the requests made together with two real syncs, not one each", async () => {
  writeFileSync(`${temp.db}-wal`, "frames");
  const sync = new WalGroupSync(temp.db);
  await Promise.all(Array.from({ length: 10 }, () => sync.request()));
  expect(sync.syncs).toBe(2);
  await sync.request();
  expect(sync.syncs).toBe(3);
  sync.close();
});

it("releases a request made while a sync is on disk only after a sync that started after it", async () => {
  writeFileSync(`${temp.db}-wal`, "frames");
  const held = heldSyncs();
  const sync = new WalGroupSync(temp.db, held.syncFile);
  const first = sync.request();
  const second = sync.request();
  const third = sync.request();
  expect(held.started()).toBe(1);
  held.finish();
  expect(await settled(first)).toBe(true);
  // The first sync may have started before the second's write: the second waits for the next one.
  expect(await settled(second)).toBe(false);
  expect(held.started()).toBe(2);
  held.finish();
  expect(await settled(second)).toBe(true);
  expect(await settled(third)).toBe(true);
  sync.close();
});

it("stops for good after a failed sync: everything waiting and everything after is a storage_error", async () => {
  writeFileSync(`${temp.db}-wal`, "frames");
  const held = heldSyncs();
  const sync = new WalGroupSync(temp.db, held.syncFile);
  const first = sync.request();
  const second = sync.request();
  held.finish(Object.assign(new Error("EIO: i/o error"), { code: "EIO" }));
  for (const p of [first, second, sync.request()]) {
    const error = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isCarError(error) && error.code === "storage_error").toBe(true);
  }
  expect(sync.failure?.message).toMatch(/EIO/);
});

it("answers without a sync when there is no WAL file, and fails typed when the WAL cannot be opened", async () => {
  const sync = new WalGroupSync(temp.db);
  await sync.request();
  expect(sync.syncs).toBe(0);
  mkdirSync(`${temp.db}-wal`);
  const error = await sync.request().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isCarError(error) && error.code === "storage_error").toBe(true);
});

it("a file store commits concurrent proposals by group commit, each reported after a sync, all on the chain", async () => {
  const store = sqlite(temp.db);
  const rt = new Runtime({ store });
  rt.registerTool("echo", async (p) => p);
  const runs = await Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      rt.executeProposal({
        id: `p${i}`,
        actions: [
          { id: "t", type: "tool_call", tool: "echo", parameters: { i } },
          { id: "w", type: "state_write", parameters: { key: `k${i}`, value: i }, dependencies: ["t"] },
        ],
      }),
    ),
  );
  expect(runs.every((r) => r.results.every((a) => a.status === "succeeded"))).toBe(true);
  // The commit's promise is the group's: a file store never answers a commit before a sync.
  const commit = store.commitProposal(EMPTY_COMMIT);
  expect(commit).toBeInstanceOf(Promise);
  await commit;
  await store.close();
  const reopened = sqlite(temp.db);
  expect(reopened.verifyChain().ok).toBe(true);
  expect(Array.from({ length: 30 }, (_, i) => reopened.state.get(`k${i}`))).toEqual(Array.from({ length: 30 }, (_, i) => i));
  await reopened.close();
});

it("keeps committing synchronously where there is nothing to group: in memory, and at synchronous = normal", async () => {
  for (const store of [sqlite(":memory:"), sqlite(temp.db, { synchronous: "normal" })]) {
    const commit = store.commitProposal(EMPTY_COMMIT);
    expect(Array.isArray(commit)).toBe(true);
    await store.close();
  }
});
