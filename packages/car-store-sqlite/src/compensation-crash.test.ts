/**
 * A crash in the middle of a compensation, with a real process and SIGKILL:
 * on restart the interrupted phase is visible (the store reports it
 * interrupted, the log shows what is done and what remains) and resumable —
 * resuming undoes the rest, and the hash chain still verifies. A plan
 * edited in the database while the process was down is refused before
 * anything of it is dispatched.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterEach, beforeEach, expect, it } from "vitest";
import { sqlite } from "./sqlite-store.ts";
import { tempDatabase } from "@car/test-kit/temp-database";
import type { TempDir } from "@car/test-kit/temp-database";
import { Runtime } from "@car/engine";

const WORKER = fileURLToPath(new URL("../test/fixtures/compensation-crash-worker.ts", import.meta.url));
let temp: TempDir;
let files: string;
let child: ReturnType<typeof spawn> | undefined;

beforeEach(() => {
  temp = tempDatabase();
  files = join(temp.dir, "files");
  mkdirSync(files);
});
afterEach(() => {
  if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  temp.remove();
});

/** Runs the saga in a worker process and kills it while its compensation hangs. */
async function crashMidCompensation(): Promise<void> {
  child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", WORKER, temp.db, files], { stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise<void>((resolve) => child!.once("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child!.stdout! }).on("line", (line) => line === "MID" && resolve());
    void exited.then(() => reject(new Error("the worker exited before the compensation hung")));
  });
  child!.kill("SIGKILL");
  await exited;
}

it("a compensation killed mid-way is visible after restart and resumes to the end", { timeout: 60_000 }, async () => {
  await crashMidCompensation();
  // c was undone before the crash; b's compensation was cut off; a's never started.
  expect(readdirSync(files).sort()).toEqual(["a", "b"]);

  const rt = new Runtime({ store: sqlite(temp.db) });
  try {
    expect((await rt.recover()).map((p) => p.proposal_id)).toEqual(["saga#compensation"]);
    expect(rt.pendingCompensations()).toEqual([{ proposal_id: "saga", done: ["w_c"], remaining: ["w_b", "w_a"] }]);
    const saga = rt.events.query({ proposal_id: "saga" }).map((e) => `${e.kind}${e.action_id ? `:${e.action_id}` : ""}`);
    // Compensation calls take the runtime's dispatcher, so each one's dispatch_intent is on disk before the tool runs.
    expect(saga.slice(saga.indexOf("compensation_planned"))).toEqual([
      "compensation_planned",
      "compensation_started:w_c",
      "dispatch_intent:w_c",
      "compensation_succeeded:w_c",
      "compensation_started:w_b",
      "dispatch_intent:w_b",
    ]);

    rt.registerTool("remove_file", (p) => {
      unlinkSync(join(files, p["name"] as string));
      return true;
    });
    const report = await rt.resumeCompensation("saga");
    expect(report.compensated).toEqual(["w_c", "w_b", "w_a"]);
    expect(report.not_undone).toEqual([]);
    expect(existsSync(join(files, "a")) || existsSync(join(files, "b"))).toBe(false);
    expect(rt.pendingCompensations()).toEqual([]);
    await expect(rt.resumeCompensation("saga")).rejects.toThrow(/no interrupted compensation/);
    expect((rt.store as ReturnType<typeof sqlite>).verifyChain()).toMatchObject({ ok: true });
  } finally {
    await rt.close();
  }
});

it("a plan edited in the database while the process was down is refused before anything is dispatched", { timeout: 60_000 }, async () => {
  await crashMidCompensation();
  // A database writer retargets the remaining steps: `a` becomes a file the undo was never meant to touch.
  const raw = new Database(temp.db);
  const row = raw.prepare("SELECT seq, data FROM events WHERE kind = 'compensation_planned'").get() as { seq: number; data: string };
  expect(row.data).toContain('"name":"a"');
  raw.prepare("UPDATE events SET data = ? WHERE seq = ?").run(row.data.replace('"name":"a"', '"name":"keep-me"'), row.seq);
  raw.close();

  const rt = new Runtime({ store: sqlite(temp.db) });
  try {
    expect(rt.pendingCompensations()).toEqual([{ proposal_id: "saga", done: ["w_c"], remaining: ["w_b", "w_a"] }]);
    const removed: string[] = [];
    rt.registerTool("remove_file", (p) => {
      removed.push(p["name"] as string);
      return true;
    });
    await expect(rt.resumeCompensation("saga")).rejects.toMatchObject({
      code: "chain_broken",
      details: { seq: row.seq, reason: "the event's hash does not match its content" },
    });
    expect(removed).toEqual([]);
    expect(readdirSync(files).sort()).toEqual(["a", "b"]);
  } finally {
    await rt.close();
  }
});

it("a plan edited after verification, before it is read, is not what gets dispatched: the verified plan is", { timeout: 60_000 }, async () => {
  await crashMidCompensation();
  const store = sqlite(temp.db);
  // A writer that edits the plan the moment verification is done (the race: verify, then read).
  const verify = store.verifyChain.bind(store);
  store.verifyChain = (options) => {
    const report = verify(options);
    const raw = new Database(temp.db);
    const row = raw.prepare("SELECT seq, data FROM events WHERE kind = 'compensation_planned'").get() as { seq: number; data: string };
    raw.prepare("UPDATE events SET data = ? WHERE seq = ?").run(row.data.replace('"name":"a"', '"name":"keep-me"'), row.seq);
    raw.close();
    return report;
  };
  const rt = new Runtime({ store });
  try {
    const removed: string[] = [];
    rt.registerTool("remove_file", (p) => {
      removed.push(p["name"] as string);
      unlinkSync(join(files, p["name"] as string));
      return true;
    });
    const report = await rt.resumeCompensation("saga");
    expect(removed).toEqual(["b", "a"]);
    expect(report.compensated).toEqual(["w_c", "w_b", "w_a"]);
  } finally {
    await rt.close();
  }
});

it("a later run of the same proposal id neither hides nor completes the earlier run's cut-short compensation (run identity)", { timeout: 60_000 }, async () => {
  await crashMidCompensation();
  const rt = new Runtime({ store: sqlite(temp.db), rollback: "compensate" });
  try {
    await rt.recover();
    const removed: string[] = [];
    rt.registerTool("write_file", () => true);
    rt.registerTool("remove_file", (p) => {
      removed.push(p["name"] as string);
      if (existsSync(join(files, p["name"] as string))) unlinkSync(join(files, p["name"] as string));
      return true;
    });
    rt.registerTool("boom", () => {
      throw new Error("broke again");
    });
    // A second run under the proposer's same id, whose own compensation completes.
    const again = await rt.executeProposal({
      id: "saga",
      actions: [
        {
          id: "w_x",
          type: "tool_call",
          tool: "write_file",
          parameters: { name: "x" },
          reversibility: "compensable",
          compensation: { type: "tool", tool: "remove_file", parameters: { name: "x" } },
        },
        { id: "fail", type: "tool_call", tool: "boom", dependencies: ["w_x"] },
      ],
    });
    expect(again.results.map((r) => r.status)).toEqual(["succeeded", "failed"]);
    expect(removed).toEqual(["x"]);
    expect(rt.pendingCompensations()).toEqual([{ proposal_id: "saga", done: ["w_c"], remaining: ["w_b", "w_a"] }]);
    const report = await rt.resumeCompensation("saga");
    expect(report.compensated).toEqual(["w_c", "w_b", "w_a"]);
    expect(removed).toEqual(["x", "b", "a"]);
    expect(rt.pendingCompensations()).toEqual([]);
  } finally {
    await rt.close();
  }
});
