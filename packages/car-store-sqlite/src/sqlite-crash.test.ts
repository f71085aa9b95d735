/**
 * Crash tests with real processes: a worker (`test/fixtures/crash-worker.ts`) runs
 * proposals against a database and is killed with SIGKILL — once while a
 * proposal is provably mid-flight, once at an arbitrary moment of a busy
 * loop. Afterwards nothing acknowledged is missing, the interrupted proposal
 * left no trace in the state, the chain verifies and the state equals the
 * replay of the log.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, expect, it } from "vitest";
import { replayStateChanges } from "@car/engine/durable";
import { sqlite } from "./sqlite-store.ts";
import { tempDatabase } from "@car/test-kit/temp-database";
import type { TempDir } from "@car/test-kit/temp-database";

const WORKER = fileURLToPath(new URL("../test/fixtures/crash-worker.ts", import.meta.url));

let temp: TempDir;
const children: ChildProcess[] = [];

beforeEach(() => {
  temp = tempDatabase();
});
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  temp.remove();
});

interface Worker {
  acked: number[];
  /** Resolves when the worker prints `line` (or the predicate holds for the acks so far). */
  waitFor(until: (line: string, acked: number[]) => boolean): Promise<void>;
  kill(): Promise<void>;
}

function startWorker(args: string[]): Worker {
  const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", WORKER, temp.db, ...args], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(child);
  const acked: number[] = [];
  const waiters: { until: (line: string, acked: number[]) => boolean; resolve: () => void }[] = [];
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  createInterface({ input: child.stdout! }).on("line", (line) => {
    if (line.startsWith("ACK ")) acked.push(Number(line.slice(4)));
    for (const w of [...waiters]) if (w.until(line, acked)) waiters.splice(waiters.indexOf(w), 1), w.resolve();
  });
  return {
    acked,
    waitFor: (until) =>
      new Promise<void>((resolve, reject) => {
        waiters.push({ until, resolve });
        void exited.then(() => reject(new Error(`the worker exited (${child.exitCode ?? child.signalCode}) before it got there`)));
      }),
    kill: async () => {
      child.kill("SIGKILL");
      await exited;
    },
  };
}

async function reopenAndCheck(acked: number[]) {
  const store = sqlite(temp.db);
  try {
    const interrupted = store.recover();
    const events = [...store.storedEvents()];
    const bySeq = new Map(events.map((e) => [e.seq, e]));
    for (const seq of acked) expect(bySeq.has(seq), `acknowledged event ${seq} is stored`).toBe(true);
    expect(store.verifyChain()).toMatchObject({ ok: true });
    expect(replayStateChanges(store.storedEvents())).toEqual(store.state.snapshot());
    return { store: store, interrupted, snapshot: store.state.snapshot() };
  } catch (error) {
    await store.close();
    throw error;
  }
}

it("a proposal killed mid-flight leaves the state at its pre-proposal snapshot and shows as interrupted", { timeout: 60_000 }, async () => {
  const worker = startWorker(["hang", "3"]);
  await worker.waitFor((line) => line === "MID");
  await worker.kill();
  expect(worker.acked).toHaveLength(3);

  const { store, interrupted, snapshot } = await reopenAndCheck(worker.acked);
  try {
    expect(interrupted.map((p) => p.proposal_id)).toEqual(["doomed"]);
    // The hanging tool was called: its durable dispatch intent survived the SIGKILL, and recovery lists it.
    expect(interrupted[0]!.dispatched).toEqual(["h"]);
    // Found by the killed run's id, which its proposal_received and its intent both name.
    const run_id = store.events.query({ proposal_id: "doomed", kinds: ["proposal_received"] })[0]!.data["run_id"];
    expect(interrupted[0]!.run_id).toBe(run_id);
    expect(store.events.query({ proposal_id: "doomed", kinds: ["dispatch_intent"] }).map((e) => [e.action_id, e.data])).toEqual([
      ["h", { attempt: 1, tool: "hang", run_id }],
    ]);
    expect(store.events.query({ proposal_id: "doomed", kinds: ["proposal_interrupted"] })[0]!.data["dispatched"]).toEqual(["h"]);
    expect(snapshot["counter"]).toBe(3);
    expect(Object.keys(snapshot).filter((k) => k.startsWith("seen/"))).toHaveLength(3);
    const doomed = store.events.query({ proposal_id: "doomed" }).map((e) => e.kind);
    expect(doomed[0]).toBe("proposal_received");
    expect(doomed.at(-1)).toBe("proposal_interrupted");
    expect(doomed).not.toContain("state_changed");
    expect(store.verifyChain()).toMatchObject({ ok: true });
  } finally {
    await store.close();
  }
});

it("killing a busy worker at an arbitrary moment loses no acknowledged event and keeps log and state in agreement", { timeout: 60_000 }, async () => {
  for (const after of [5, 23]) {
    const worker = startWorker(["loop"]);
    await worker.waitFor((_line, acked) => acked.length >= after);
    await worker.kill();
    const { store, snapshot } = await reopenAndCheck(worker.acked);
    try {
      const committed = store.events.query({ kinds: ["proposal_completed"] }).filter((e) => e.data["outcome"] === "committed").length;
      expect(committed).toBeGreaterThanOrEqual(worker.acked.length);
      // Each committed increment added one `seen/` key; the counter counts them (runs of earlier rounds included).
      expect(Object.keys(snapshot).filter((k) => k.startsWith("seen/")).length).toBeLessThanOrEqual(committed);
      expect(snapshot["counter"]).toBe(committed);
      expect(store.state.version("counter")).toBe(committed);
    } finally {
      await store.close();
    }
  }
});
