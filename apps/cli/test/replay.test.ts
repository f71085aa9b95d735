/**
 * `car replay` on a real SQLite database written by real `car run`s with
 * program tools: the recorded run shown with the state the log
 * reconstructs, re-checked against today's gate and policies without
 * running anything, re-run through the same admission (an approval spent
 * by the recorded run does not let the re-run through), and refused on a
 * log that does not verify.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordingWorkspace, type RecordingWorkspace } from "./recording-tools.ts";
import { runCar } from "./run-car.ts";

let ws: RecordingWorkspace;
const env = () => ws.env();
/** An empty policy directory: the runs see no rules unless a test gives some. */
let noPolicies: string;

const list = { id: "a", type: "tool_call", tool: "list_files", parameters: { dir: "." }, expected_effects: { listed: true } };
const write = { id: "w", type: "state_write", parameters: { key: "count", value: 3 }, dependencies: ["a"] };

const run = (file: string) => runCar(["run", file, "--tools", ws.toolsFile, "--policies", noPolicies], { env: env() });
const replay = (args: string[]) => runCar(["replay", ...args], { env: env() });
const eventCount = async (): Promise<number> => (await runCar(["audit", "query", "--json"], { env: env() })).stdout.trim().split("\n").length;

beforeAll(async () => {
  ws = recordingWorkspace("car-replay-", ["list_files", "send_email"]);
  noPolicies = join(ws.root, "no-policies");
  mkdirSync(noPolicies);
  const first = await run(ws.proposal("p1", [list, write]));
  expect(first.code, first.stderr).toBe(0);
});
afterAll(() => ws.remove());

describe("car replay <id>", () => {
  it("shows the recorded run: each action's end, what it committed, and the state the log reconstructs", async () => {
    const r = await replay(["p1", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const shown = JSON.parse(r.stdout);
    expect(shown).toMatchObject({ proposal_id: "p1", outcome: "committed", writes: { listed: true, count: 3 }, state: { listed: true, count: 3 } });
    expect(shown.actions).toEqual([
      { action_id: "a", tool: "list_files", status: "succeeded" },
      { action_id: "w", tool: null, status: "succeeded" },
    ]);
    expect(shown.proposal.actions.map((a: { id: string }) => a.id)).toEqual(["a", "w"]);
    // The same run by its run id, as text.
    const byRun = await replay([shown.run_id]);
    expect(byRun.code).toBe(0);
    expect(byRun.stdout).toContain(`proposal p1  run ${shown.run_id}`);
    expect(byRun.stdout).toMatch(/count = 3/);
  });

  it("a name the log does not hold is not_found (exit 1); an option of car run without --run is bad usage (exit 2)", async () => {
    const missing = await replay(["nope"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no recorded run or proposal 'nope'");
    const stray = await replay(["p1", "--tools", ws.toolsFile]);
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain("--tools applies to --run only");
    const both = await replay(["p1", "--check", "--run"]);
    expect(both.code).toBe(2);
    const memory = await replay(["p1", "--db", ":memory:"]);
    expect(memory.code).toBe(2);
  });
});

describe("car replay --check", () => {
  it("finds no difference under the same gate and rules, and runs and records nothing", async () => {
    const fired = ws.fired().length;
    const events = await eventCount();
    const r = await replay(["p1", "--check", "--policies", noPolicies]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain("admission would admit the proposal");
    expect(r.stdout).toContain("no differences");
    expect(ws.fired().length).toBe(fired);
    expect(await eventCount()).toBe(events);
  });

  it("names each difference today's policies and tier make, exit 1", async () => {
    const rules = join(ws.root, "deny-list");
    mkdirSync(rules);
    writeFileSync(join(rules, "rules.toml"), 'deny_tool = ["list_files"]\n');
    const r = await replay(["p1", "--check", "--policies", rules, "--tier", "read_only", "--json"]);
    expect(r.code).toBe(1);
    const { check } = JSON.parse(r.stdout);
    expect(check.admitted_now).toBe(false);
    const a = check.actions.find((x: { action_id: string }) => x.action_id === "a");
    expect(a.policy_denials[0]).toContain("deny_tool:list_files");
    const w = check.actions.find((x: { action_id: string }) => x.action_id === "w");
    expect(w).toMatchObject({ gate: "needs_approval", required: "sandbox_edit", granted: "read_only" });
    const what = check.differences.map((d: { action_id: string; what: string }) => `${d.action_id}: ${d.what}`).join("\n");
    expect(what).toContain("a: it ran (succeeded); today policy denies it");
    expect(what).toMatch(/w: it ran \(succeeded\); today admission refuses the proposal — approval needed: fingerprint [0-9a-f]{64}/);
  });

  it("compares the plan's declared effects with what the run committed", async () => {
    // A run that rolls back commits nothing its plan declares.
    const failing = { id: "f", type: "tool_call", tool: "no_such_tool", parameters: {}, expected_effects: { done: true }, dependencies: ["a"] };
    const r0 = await run(ws.proposal("p2", [list, failing]));
    expect(r0.code).toBe(1);
    const r = await replay(["p2", "--check", "--policies", noPolicies]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("(plan): state 'done': the plan's declared effects give true, the run left absent");
  });
});

describe("car replay --run", () => {
  it("runs the recorded proposal again through car run's admission", async () => {
    const before = ws.fired().length;
    const r = await replay(["p1", "--run", "--tools", ws.toolsFile, "--policies", noPolicies, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).proposal_id).toBe("p1");
    expect(ws.fired().length).toBe(before + 1);
    const runs = (await runCar(["audit", "query", "--proposal", "p1", "--kind", "proposal_received", "--json"], { env: env() })).stdout.trim().split("\n");
    expect(runs.length).toBeGreaterThanOrEqual(2);
  });

  it("never bypasses the gate: an approval the recorded run spent does not let the re-run through", async () => {
    const send = { id: "s", type: "tool_call", tool: "send_email", parameters: { to: "ops@example.com" } };
    const file = ws.proposal("mail", [send]);
    const blocked = await run(file);
    expect(blocked.code).toBe(1);
    const fingerprint = /approval needed: s fingerprint ([0-9a-f]{64})/.exec(blocked.stderr)![1]!;
    expect((await runCar(["approvals", "approve", fingerprint, "--uses", "1"], { env: env() })).code).toBe(0);
    expect((await run(file)).code).toBe(0);
    const sent = ws.fired().filter((t) => t === "send_email").length;
    const again = await replay(["mail", "--run", "--tools", ws.toolsFile, "--policies", noPolicies]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`approval needed: s fingerprint ${fingerprint}`);
    expect(ws.fired().filter((t) => t === "send_email").length).toBe(sent);
  });
});

describe("car replay <JOURNAL> (the reference's form)", () => {
  it("shows a run from a journal file whose events verify, and refuses one edited or without hashes", async () => {
    const journal = join(ws.root, "p3.jsonl");
    const r0 = await runCar(["run", ws.proposal("p3", [list, write]), "--tools", ws.toolsFile, "--policies", noPolicies, "--events", journal], {
      env: env(),
    });
    expect(r0.code, r0.stderr).toBe(0);
    const shown = await replay([journal, "--json"]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ proposal_id: "p3", outcome: "committed", writes: { count: 3 }, journal: { path: journal } });

    const edited = join(ws.root, "edited.jsonl");
    writeFileSync(edited, readFileSync(journal, "utf8").replace("list_files", "rm_rf"));
    const refused = await replay([edited]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toMatch(/cannot replay .*edited\.jsonl: line 1: event seq \d+'s hash does not match its content/);

    const unhashed = join(ws.root, "unhashed.jsonl");
    writeFileSync(
      unhashed,
      readFileSync(journal, "utf8")
        .trim()
        .split("\n")
        .map((line) => {
          const { hash: _hash, prev_hash: _prev, ...bare } = JSON.parse(line);
          return JSON.stringify(bare);
        })
        .join("\n"),
    );
    const none = await replay([unhashed]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("line 1: the event carries no hash, so nothing vouches for it");

    const check = await replay([journal, "--check"]);
    expect(check.code).toBe(2);
    expect(check.stderr).toContain("--check works on the database");
  });
});

describe("a log that does not verify", () => {
  it("is refused with chain_broken (exit 1) before anything is shown, checked or run", async () => {
    const db = new Database(join(env().CAR_HOME, "car.db"));
    try {
      const row = db.prepare("SELECT seq, data FROM events WHERE kind = 'proposal_received' ORDER BY seq LIMIT 1").get() as { seq: number; data: string };
      db.prepare("UPDATE events SET data = ? WHERE seq = ?").run(row.data.replace("list_files", "rm_rf"), row.seq);
    } finally {
      db.close();
    }
    const before = ws.fired().length;
    for (const args of [["p1"], ["p1", "--check"], ["p1", "--run", "--tools", ws.toolsFile, "--policies", noPolicies]]) {
      const r = await replay(args);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(/cannot replay 'p1': the audit log does not verify \(seq \d+: /);
    }
    expect(ws.fired().length).toBe(before);
  });
});
