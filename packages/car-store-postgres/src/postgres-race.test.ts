/**
 * Races and crashes with real processes on a real PostgreSQL server: worker
 * processes (`test/fixtures/race-worker.ts`) run read-modify-write proposals on
 * overlapping counters at the same time, one of them is killed with SIGKILL
 * mid-run, another while provably mid-proposal. Afterwards the database
 * must be exactly the serial replay of the committed proposals.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { JsonValue } from "@car/ir";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresBinDir, startPostgresCluster } from "@car/test-kit/postgres-cluster";
import type { PostgresCluster } from "@car/test-kit/postgres-cluster";
import type { CarEvent } from "@car/engine";
import { postgres } from "./index.ts";
import type { PostgresStore } from "./index.ts";

const WORKER = fileURLToPath(new URL("../test/fixtures/race-worker.ts", import.meta.url));
const SHARED = ["shared/0", "shared/1", "shared/2", "shared/3"];

const installed = postgresBinDir() !== undefined;
if (!installed) console.warn("PostgreSQL is not installed (apt-get install postgresql): skipping the PostgreSQL race and crash tests");

let cluster: PostgresCluster;
const children: ChildProcess[] = [];
beforeAll(async () => {
  if (installed) cluster = await startPostgresCluster();
});
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  cluster?.stop();
});

interface Line {
  id: string;
  keys: string[];
  outcome: "committed" | "rolled_back";
  reason: string | null;
}

interface Worker {
  lines: Line[];
  waitFor(prefix: string): Promise<string>;
  /** Resolves with the first line `match` accepts; rejects, naming `what`, if the worker exits first. */
  waitUntil(match: (line: string) => boolean, what: string): Promise<string>;
  go(): void;
  exited: Promise<void>;
  kill(): Promise<void>;
}

function startWorker(args: Record<string, unknown>): Worker {
  const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", WORKER, JSON.stringify(args)], { stdio: ["pipe", "pipe", "inherit"] });
  children.push(child);
  const lines: Line[] = [];
  const seen: string[] = [];
  const waiters: { match: (line: string) => boolean; resolve: (line: string) => void }[] = [];
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  createInterface({ input: child.stdout! }).on("line", (line) => {
    if (line.startsWith("{")) lines.push(JSON.parse(line) as Line);
    seen.push(line);
    for (const w of [...waiters]) if (w.match(line)) waiters.splice(waiters.indexOf(w), 1), w.resolve(line);
  });
  const waitUntil = (match: (line: string) => boolean, what: string): Promise<string> =>
    new Promise<string>((resolve, reject) => {
      const already = seen.find(match);
      if (already !== undefined) return resolve(already);
      waiters.push({ match, resolve });
      void exited.then(() => reject(new Error(`worker exited (${child.exitCode ?? child.signalCode}) before printing ${what}`)));
    });
  return {
    lines,
    waitFor: (prefix) => waitUntil((l) => l.startsWith(prefix), prefix),
    waitUntil,
    go: () => child.stdin!.end("GO\n"),
    exited,
    kill: async () => {
      child.kill("SIGKILL");
      await exited;
    },
  };
}

/** Opens a checking store on the database and waits until it is loaded. */
async function inspect(url: string): Promise<PostgresStore> {
  const store = postgres(url, { poolSize: 2 });
  await store.ready();
  return store;
}

/** Per proposal id, its events in log order. */
function byProposal(events: readonly CarEvent[]): Map<string, CarEvent[]> {
  const out = new Map<string, CarEvent[]>();
  for (const e of events) {
    if (e.proposal_id === null) continue;
    const list = out.get(e.proposal_id) ?? [];
    list.push(e);
    out.set(e.proposal_id, list);
  }
  return out;
}

describe.skipIf(!installed)("postgres races", () => {
  it("4 racing worker processes plus one killed mid-run: the state is the serial replay of exactly the committed proposals, no update lost, every abort names its conflict", async () => {
    const url = cluster.createDatabase("race");
    const common = { url, mode: "race", ms: 3000, shared: SHARED, overlap: 0.5, ownKeys: 3, report: "lines", tx: "strict" };
    const workers = [0, 1, 2, 3].map((i) => startWorker({ ...common, name: `w${i}` }));
    // The victim would run for a minute: it is always killed mid-run, once it has committed at least once
    // (a fixed delay alone was too short on a loaded CI machine) and no earlier than 1.2 s into the race.
    const victim = startWorker({ ...common, ms: 60_000, name: "victim" });
    await Promise.all([...workers, victim].map((w) => w.waitFor("READY")));
    for (const w of [...workers, victim]) w.go();
    await Promise.all([
      victim.waitUntil((l) => l.startsWith("{") && (JSON.parse(l) as Line).outcome === "committed", "a committed proposal"),
      new Promise((r) => setTimeout(r, 1200)),
    ]);
    await victim.kill();
    await Promise.all(workers.map((w) => w.waitFor("DONE")));
    await Promise.all(workers.map((w) => w.exited));

    const check = await inspect(url);
    try {
      const log = await check.events.queryShared();
      const proposals = byProposal(log);
      // The final outcome: a commit the store refused keeps its void `committed` completion in the log, followed by the rollback's.
      const outcome = (id: string): JsonValue | undefined => proposals.get(id)?.findLast((e) => e.kind === "proposal_completed")?.data["outcome"];

      // Every proposal in the log starts with its receipt and ends in its outcome — except at most one of the
      // victim's, killed after a dispatch intent: the intents reach the log before the tool runs, the rest only at commit.
      const unfinished = [...proposals].filter(([, events]) => events.at(-1)!.kind !== "proposal_completed");
      expect(unfinished.length).toBeLessThanOrEqual(1);
      for (const [id, events] of unfinished) {
        expect(id.startsWith("victim-"), id).toBe(true);
        expect(events.at(-1)!.kind, id).toBe("dispatch_intent");
      }
      for (const [id, events] of proposals) expect(events[0]!.kind, id).toBe("proposal_received");

      // What the surviving workers reported is what the log says; every abort names a key it touched.
      const lines = workers.flatMap((w) => w.lines);
      const committed = lines.filter((l) => l.outcome === "committed");
      const aborted = lines.filter((l) => l.outcome === "rolled_back");
      expect(committed.length).toBeGreaterThan(20);
      expect(aborted.length).toBeGreaterThan(0);
      for (const l of committed) expect(outcome(l.id), l.id).toBe("committed");
      for (const l of aborted) {
        expect(outcome(l.id), l.id).toBe("rolled_back");
        expect(l.reason, l.id).toMatch(/changed before it committed|committed keys this proposal writes first/);
        expect(
          l.keys.some((k) => l.reason!.includes(k)),
          `${l.id}: ${l.reason}`,
        ).toBe(true);
        expect(proposals.get(l.id)!.find((e) => e.kind === "proposal_rolled_back")?.data["reason"], l.id).toBe(l.reason);
      }

      // Serial replay in commit order: each committed write is exactly one more than the previous committed value.
      const replay = new Map<string, number>();
      const touched = new Map<string, number>();
      for (const [id, events] of proposals) {
        if (outcome(id) !== "committed") continue;
        for (const e of events.filter((x) => x.kind === "state_changed")) {
          const key = e.data["key"] as string;
          expect(e.data["value"], `${id} ${key}`).toBe((replay.get(key) ?? 0) + 1);
          expect(e.data["version"], `${id} ${key}`).toBe((replay.get(key) ?? 0) + 1);
          replay.set(key, e.data["value"] as number);
          touched.set(key, (touched.get(key) ?? 0) + 1);
        }
      }
      const snapshot = check.state.snapshot();
      expect(snapshot).toEqual(Object.fromEntries(replay));
      // Counters sum correctly: each key was incremented once per committed proposal that touched it.
      expect(Object.values(snapshot).reduce<number>((sum, v) => sum + (v as number), 0)).toBe(
        2 * [...proposals.keys()].filter((id) => outcome(id) === "committed").length,
      );
      for (const [key, n] of touched) {
        expect(snapshot[key]).toBe(n);
        expect(check.state.version(key)).toBe(n);
      }
      // The victim committed some proposals, none half-way.
      expect([...proposals.keys()].some((id) => id.startsWith("victim-") && outcome(id) === "committed")).toBe(true);
      expect(await check.verifyChain()).toMatchObject({ ok: true, verified: log.length });
    } finally {
      await check.close();
    }
  }, 120_000);

  it("a worker killed with SIGKILL in the middle of a proposal leaves none of its writes; recover marks it interrupted and lists the dispatched tools", async () => {
    const url = cluster.createDatabase("crash");
    const seed = await inspect(url);
    seed.state.set("shared/0", 41);
    await seed.flush();
    const worker = startWorker({ url, name: "doomed", mode: "hang", ms: 0, shared: SHARED, overlap: 0, ownKeys: 1, report: "lines", tx: "strict" });
    const id = (await worker.waitFor("MID ")).slice(4);
    await worker.kill();

    const check = await inspect(url);
    try {
      // What reached the log before the kill: the run up to the hanging tool's dispatch intent, no state change, no outcome.
      const before = await check.events.queryShared({ proposal_id: id });
      expect(before[0]!.kind).toBe("proposal_received");
      expect(before.at(-1)).toMatchObject({ kind: "dispatch_intent", action_id: "h", data: { attempt: 1, tool: "hang" } });
      expect(before.filter((e) => e.kind === "dispatch_intent").map((e) => e.action_id)).toEqual(["i0", "h"]);
      expect(before.map((e) => e.kind)).not.toContain("state_changed");
      expect(check.state.snapshot()).toEqual({ "shared/0": 41 });
      expect(check.state.version("shared/0")).toBe(1);
      // Found by the killed run's id, which every event of it names.
      const run_id = before[0]!.data["run_id"];
      expect(before.every((e) => e.data["run_id"] === run_id)).toBe(true);
      expect(await check.recover()).toEqual([{ proposal_id: id, run_id, timestamp: expect.any(String), dispatched: ["i0", "h"] }]);
      const after = await check.events.queryShared({ proposal_id: id });
      expect(after.slice(0, -1)).toEqual(before);
      expect(after.at(-1)).toMatchObject({ kind: "proposal_interrupted", data: { dispatched: ["i0", "h"], run_id } });
      expect(await check.recover()).toEqual([]);
      expect(await check.verifyChain()).toMatchObject({ ok: true });
    } finally {
      await check.close();
      await seed.close();
    }
  }, 30_000);
});
