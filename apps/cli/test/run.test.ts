/**
 * `car run` end to end: the README demo, tools from a module and from
 * programs in a tools.json, policies given and discovered, the event log,
 * and exit codes by outcome.
 */
import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseProposal } from "@car/ir";
import { operationFingerprint } from "@car/policy";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployApprovals, demo, deployFingerprint, repoRoot, resolvedDeployFingerprint } from "./demo.ts";
import { CAR_NODE_ARGS, runCar } from "./run-car.ts";

let root: string;
let carHome: string;

const PROGRAMS = `
import { readFileSync, writeFileSync } from "node:fs";
const call = JSON.parse(readFileSync(0, "utf8"));
const mode = process.argv[2];
if (mode === "echo") process.stdout.write(JSON.stringify({ tool: call.tool, params: call.params, action_id: call.action_id, attempt: call.attempt }));
if (mode === "crash") { process.stderr.write("disk on fire"); process.exit(3); }
if (mode === "garbage") process.stdout.write("not json at all");
if (mode === "fatal") process.stdout.write(JSON.stringify({ error: "credentials revoked", terminal: true }));
if (mode === "hang") { writeFileSync(process.argv[3], String(process.pid)); setInterval(() => {}, 1000); }
`;

function writeProposal(name: string, actions: unknown[]): string {
  const file = join(root, name);
  writeFileSync(file, JSON.stringify({ id: name.replace(/\W/g, "").slice(0, 12), actions }));
  return file;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "car-run-")));
  carHome = join(root, "car-home");
  mkdirSync(carHome);
  // The tests below run the demo in this CAR home: its deploy is approved once, as an operator would.
  for (const approve of deployApprovals()) {
    const approved = await runCar(approve, { env: { CAR_HOME: carHome } });
    expect(approved.code, approved.stderr).toBe(0);
  }
  writeFileSync(join(root, "programs.mjs"), PROGRAMS);
  const program = (mode: string, extra: Record<string, unknown> = {}) => ({ command: [process.execPath, "./programs.mjs", mode], ...extra });
  writeFileSync(
    join(root, "tools.json"),
    JSON.stringify({
      echo: program("echo", { schema: { parameters: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] } } }),
      crash: program("crash"),
      garbage: program("garbage"),
      fatal: program("fatal"),
      hang: { command: [process.execPath, "./programs.mjs", "hang", join(root, "hang.pid")], timeout_ms: 60000 },
    }),
  );
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("car run", () => {
  it("runs the README demo: the gate stops the deploy and nothing runs, then after the approval everything runs, exit 0", async () => {
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done, fail) => {
      execFile(
        process.execPath,
        ["examples/deploy/demo.mjs", process.execPath, ...CAR_NODE_ARGS],
        { cwd: repoRoot, env: { ...process.env, NO_COLOR: "1" } },
        (err, stdout, stderr) =>
          err !== null && typeof err.code !== "number" ? fail(err) : done({ code: err === null ? 0 : (err.code as number), stdout, stderr }),
      );
    });
    expect(r.code, r.stderr).toBe(0);
    const [gated, approval, resolved, resolvedApproval, ran] = r.stdout.split(/^# \d\. /m).slice(1) as [string, string, string, string, string];
    expect(gated).toContain("0 executed, 4 rejected, 0 skipped; 0 tool calls");
    expect(r.stderr).toContain(`approval needed: deploy fingerprint ${deployFingerprint} requires full_access, granted sandbox_edit`);
    expect(approval).toContain(`approved deploy up to full_access (fingerprint ${deployFingerprint}) by demo`);
    // The template's approval does not cover what it resolved to (DECISIONS §22): nothing was deployed, and the resolved form is named.
    expect(resolved).toMatch(/deploy\s+rejected/);
    expect(r.stderr).toContain(`approval needed: deploy's resolved form fingerprint ${resolvedDeployFingerprint} requires full_access, granted sandbox_edit`);
    expect(resolvedApproval).toContain(`(fingerprint ${resolvedDeployFingerprint}) by demo`);
    expect(ran).toMatch(/build\s+succeeded/);
    expect(ran).toMatch(/deploy\s+succeeded.*"url":"https:\/\/staging.example.internal"/);
    expect(ran).toMatch(/record\s+succeeded/);
    expect(ran).toContain("4 executed, 0 rejected, 0 skipped; 3 tool calls");
    // live progress, one line per action event, on stderr
    expect(r.stderr).toContain("5 policy rules");
    expect(r.stderr.indexOf("▶ build")).toBeLessThan(r.stderr.indexOf("✓ build"));
    expect(r.stderr.indexOf("✓ build")).toBeLessThan(r.stderr.indexOf("▶ deploy"));
  }, 120_000);

  it("prints the ProposalResult as JSON and writes the event log as JSON lines", async () => {
    const events = join(root, "events.jsonl");
    const r = await runCar(["run", ...demo, "--json", "--events", events], { cwd: repoRoot, env: { CAR_HOME: carHome } });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    const result = JSON.parse(r.stdout);
    expect(result.proposal_id).toBe("a1b2c3d4e5f6");
    expect(result.results.map((x: { status: string }) => x.status)).toEqual(["succeeded", "succeeded", "succeeded", "succeeded"]);
    expect(result.results[3].state_changes).toEqual({ last_deploy: { op: "set", value: "staging" } });
    expect(result.cost).toMatchObject({ tool_calls: 3, actions_executed: 4, actions_rejected: 0, actions_skipped: 0, retries: 0 });
    const lines = readFileSync(events, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines[0].kind).toBe("proposal_received");
    expect(lines.at(-1).kind).toBe("proposal_completed");
    const succeeded = lines.filter((e) => e.kind === "action_succeeded");
    expect(succeeded.map((e) => e.action_id)).toEqual(["build", "test", "deploy", "record"]);
    expect(succeeded[0].data.params_digest).toMatch(/^[0-9a-f]{64}$/);
    // Exactly what the durable log holds for this run, hashes included.
    const logged = (await runCar(["audit", "query", "--proposal", "a1b2c3d4e5f6", "--json"], { cwd: repoRoot, env: { CAR_HOME: carHome } })).stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toEqual(logged.filter((e: { seq: number }) => e.seq >= lines[0].seq));
    expect(lines.every((e: { hash?: string }) => typeof e.hash === "string")).toBe(true);
  });

  it("prints each static-gate finding once: as the admission rejection, not again from verify", async () => {
    const proposal = writeProposal("gate.json", [
      { id: "x", type: "tool_call", tool: "nope", parameters: {} },
      { id: "e", type: "tool_call", tool: "echo", parameters: {} },
    ]);
    const r = await runCar(["run", proposal, "--tools", join(root, "tools.json"), "--policies", join(root, "no-policies")], { env: { CAR_HOME: carHome } });
    expect(r.code).toBe(1);
    // Progress (stderr) shows each rejection as it happens and the summary (stdout) lists it; neither repeats it.
    for (const out of [r.stdout, r.stderr]) {
      const count = (text: string) => out.split(text).length - 1;
      expect(count("calls tool 'nope', which is not registered")).toBe(1);
      expect(count("parameters do not match the schema of tool 'echo'")).toBe(1);
      expect(out).not.toMatch(/unknown tool|fail its schema|verify: error/);
    }
  });

  it("refuses a call a policy denies, naming the rule, and exits 1", async () => {
    const proposal = writeProposal("prod.json", [{ id: "ship", type: "tool_call", tool: "deploy", parameters: { env: "prod", artifact: "web.tar.gz" } }]);
    const tools = join(repoRoot, "examples/deploy/tools.mjs");
    // Approved (deploy is full_access): the policy still denies it.
    const fingerprint = operationFingerprint(parseProposal(JSON.parse(readFileSync(proposal, "utf8"))).actions[0]!);
    expect((await runCar(["approvals", "approve", fingerprint, "--tier", "full_access"], { env: { CAR_HOME: carHome } })).code).toBe(0);
    const r = await runCar(["run", proposal, "--tools", tools, "--policies", join(repoRoot, "examples/deploy/policies"), "--json"], {
      env: { CAR_HOME: carHome },
    });
    expect(r.code).toBe(1);
    const result = JSON.parse(r.stdout);
    expect(result.results[0].status).toBe("rejected");
    expect(result.results[0].error).toContain("allow_tool_param:deploy.env");
  });

  it("discovers the repository's policies from a subdirectory when --policies is absent", async () => {
    const repo = join(root, "repo");
    mkdirSync(join(repo, "a", "b"), { recursive: true });
    execFileSync("git", ["init", "-q", repo]);
    mkdirSync(join(repo, ".car", "policies"), { recursive: true });
    writeFileSync(join(repo, ".car", "policies", "deny.toml"), 'deny_tool = ["echo"]\n');
    const proposal = writeProposal("echo.json", [{ id: "e", type: "tool_call", tool: "echo", parameters: { n: 1 } }]);
    const r = await runCar(["run", proposal, "--tools", join(root, "tools.json"), "--json"], { cwd: join(repo, "a", "b"), env: { CAR_HOME: carHome } });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).results[0].error).toContain("deny_tool:echo");
  });

  it("stops with exit 2 naming a policy file that does not load", async () => {
    const dir = join(root, "broken-policies");
    mkdirSync(dir);
    writeFileSync(join(dir, "bad.toml"), "deny_tool = [ nope");
    const proposal = writeProposal("one.json", [{ id: "e", type: "tool_call", tool: "echo", parameters: { n: 1 } }]);
    const r = await runCar(["run", proposal, "--tools", join(root, "tools.json"), "--policies", dir], { env: { CAR_HOME: carHome } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(join(dir, "bad.toml"));
    expect(r.stdout).toBe("");
  });

  it("--state seeds the database: absent keys are written, equal ones left alone, a different value refuses the run with nothing written", async () => {
    const db = join(root, "seeded.db");
    const stateFile = (name: string, state: unknown) => {
      const file = join(root, name);
      writeFileSync(file, JSON.stringify(state));
      return file;
    };
    const read = writeProposal("read-k.json", [{ id: "r", type: "state_read", parameters: { key: "k" } }]);
    const run = (state: string) =>
      runCar(["run", read, "--tools", join(root, "tools.json"), "--db", db, "--state", state, "--json"], { env: { CAR_HOME: carHome } });
    const first = await run(stateFile("k1.json", { k: 1 }));
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).results[0].output).toBe(1);
    // The same initial state again: nothing to seed, the run goes ahead.
    expect((await run(stateFile("k1-again.json", { k: 1 }))).code).toBe(0);
    const other = await run(stateFile("k2.json", { k: 2, fresh: true }));
    expect(other.code).toBe(2);
    expect(other.stderr).toContain("the database already holds 'k' with other values; --state only seeds initial state");
    expect(other.stdout).toBe("");
    // Nothing of the refused file landed: k is still 1 and `fresh` was not written.
    const after = await runCar(
      [
        "run",
        writeProposal("read-both.json", [{ id: "r", type: "state_read", parameters: { keys: ["k", "fresh"] } }]),
        "--tools",
        join(root, "tools.json"),
        "--db",
        db,
        "--json",
      ],
      { env: { CAR_HOME: carHome } },
    );
    expect(JSON.parse(after.stdout).results[0].output).toEqual({ k: 1, fresh: null });
  });

  it("warns on each misspelt field with a did-you-mean, and --strict refuses the proposal (exit 2) before anything runs", async () => {
    const proposal = writeProposal("typos.json", [
      { id: "first", type: "tool_call", tool: "echo", parameters: { n: 1 } },
      { id: "second", type: "tool_call", tool: "echo", parameters: { n: 2 }, dependecies: ["first"], failure_behaviour: "skip", max_retry: 2 },
    ]);
    const args = ["run", proposal, "--tools", join(root, "tools.json"), "--db", ":memory:"];
    const warned = await runCar(args, { env: { CAR_HOME: carHome, NO_COLOR: "1" } });
    expect(warned.code, `${warned.stderr}\n${warned.stdout}`).toBe(0);
    expect(warned.stderr).toContain("verify: warning second: /actions/1/dependecies: unknown field 'dependecies' — did you mean 'dependencies'?");
    expect(warned.stderr).toContain("did you mean 'failure_behavior'?");
    expect(warned.stderr).toContain("did you mean 'max_retries'?");
    // --json: stdout is the result alone, the warnings still reach stderr.
    const json = await runCar([...args, "--json"], { env: { CAR_HOME: carHome } });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout).results).toHaveLength(2);
    expect(json.stderr).toContain("warning: second: /actions/1/max_retry: unknown field 'max_retry' — did you mean 'max_retries'?");
    const strict = await runCar([...args, "--strict"], { env: { CAR_HOME: carHome } });
    expect(strict.code).toBe(2);
    expect(strict.stderr).toContain("/actions/1/dependecies: unknown field 'dependecies' — did you mean 'dependencies'?");
    expect(strict.stderr).not.toContain("running proposal");
  });

  it("names one operation gated four times once: one approval line naming its actions, one approve command, repeated reasons shown once", async () => {
    const tools = join(root, "deploy-tools.mjs");
    writeFileSync(tools, "export const deploy = () => ({ ok: true });\n");
    const same = { type: "tool_call", tool: "deploy", parameters: { env: "prod" } };
    const proposal = writeProposal(
      "four-deploys.json",
      ["d1", "d2", "d3", "d4"].map((id) => ({ id, ...same })),
    );
    const db = join(root, "four.db");
    const r = await runCar(["run", proposal, "--tools", tools, "--db", db], { env: { CAR_HOME: carHome, NO_COLOR: "1" } });
    expect(r.code).toBe(1);
    const fingerprint = /fingerprint ([0-9a-f]{64})/.exec(r.stderr)![1]!;
    const output = `${r.stdout}\n${r.stderr}`;
    // The first rejection's progress line and summary row, the approval line, the approve command: not 16 copies.
    expect(output.split(fingerprint).length - 1).toBe(4);
    expect(r.stderr).toContain(`approval needed: d1, d2, d3, d4 fingerprint ${fingerprint} requires full_access, granted sandbox_edit`);
    expect(r.stderr.match(/approve: car approvals approve/g)).toHaveLength(1);
    expect(r.stderr).toContain("⊘ d4 (deploy) rejected: same as d1");
    expect(r.stdout).toMatch(/d4\s+rejected\s+\d+ ms\s+same as d1/);
  });

  it("runs programs from a tools.json with the call JSON on stdin", async () => {
    const proposal = writeProposal("echo2.json", [
      { id: "first", type: "tool_call", tool: "echo", parameters: { n: 1 } },
      { id: "second", type: "tool_call", tool: "echo", parameters: { n: "$first.output.params.n" }, dependencies: ["first"] },
    ]);
    const r = await runCar(["run", proposal, "--tools", join(root, "tools.json"), "--json"], { env: { CAR_HOME: carHome } });
    expect(r.code).toBe(0);
    const [first, second] = JSON.parse(r.stdout).results;
    expect(first.output).toEqual({ tool: "echo", params: { n: 1 }, action_id: "first", attempt: 1 });
    expect(second.output.params).toEqual({ n: 1 });
  });

  it.each([
    ["crash", /exited with code 3: disk on fire/],
    ["garbage", /not JSON/],
  ])("reports a %s program as a failed action and exits 1", async (tool, message) => {
    const proposal = writeProposal(`${tool}.json`, [{ id: "x", type: "tool_call", tool, parameters: {} }]);
    const r = await runCar(["run", proposal, "--tools", join(root, "tools.json"), "--json"], { env: { CAR_HOME: carHome } });
    expect(r.code).toBe(1);
    const [x] = JSON.parse(r.stdout).results;
    expect(x.status).toBe("failed");
    expect(x.error).toMatch(message);
  });

  it("treats {error, terminal: true} as terminal: no retry, the rest rolled back", async () => {
    const proposal = writeProposal("fatal.json", [
      { id: "ok", type: "state_write", parameters: { key: "k", value: 1 } },
      { id: "x", type: "tool_call", tool: "fatal", parameters: {}, dependencies: ["ok"], failure_behavior: "retry", max_retries: 3 },
    ]);
    const r = await runCar(["run", proposal, "--tools", join(root, "tools.json"), "--json"], { env: { CAR_HOME: carHome } });
    expect(r.code).toBe(1);
    const { results, cost } = JSON.parse(r.stdout);
    expect(results[1]).toMatchObject({ status: "failed", terminal: true, error: "credentials revoked" });
    expect(results[0]).toMatchObject({ status: "succeeded", rolled_back: true });
    expect(cost.retries).toBe(0);
  });

  it("kills a program that outlives its action's timeout", async () => {
    const pidFile = join(root, "hang.pid");
    const proposal = writeProposal("hang.json", [{ id: "h", type: "tool_call", tool: "hang", parameters: {}, timeout_ms: 1500 }]);
    const r = await runCar(["run", proposal, "--tools", join(root, "tools.json"), "--json"], { env: { CAR_HOME: carHome } });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).results[0].status).toBe("failed");
    expect(existsSync(pidFile)).toBe(true);
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(alive(pid)).toBe(false);
  });

  it.each([
    [["run", "examples/deploy/proposal.json"], /--tools is required/],
    [["run", "examples/deploy/proposal.json", "--tools", "examples/deploy/nope.mjs"], /cannot load tools module/],
    [["run", "examples/deploy/proposal.json", "--tools", "examples/deploy/state.json"], /tool 'tests_passed' must be a program path/],
  ])("exits 2 on bad usage: %j", async (args, message) => {
    const r = await runCar(args, { cwd: repoRoot, env: { CAR_HOME: carHome } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it("shows trace-rule denials by rule name, and with --rollback compensate runs and shows the compensations", async () => {
    const work = join(root, "saga");
    mkdirSync(join(work, "policies"), { recursive: true });
    writeFileSync(
      join(work, "tools.mjs"),
      `import { unlinkSync, writeFileSync } from "node:fs";
export const write_file = (p) => { writeFileSync(p.path, "x"); return { path: p.path }; };
export const remove_file = (p) => { unlinkSync(p.path); return true; };
export const deploy = () => { throw new Error("deploy target unreachable"); };
export const run_tests = () => "green";
`,
    );
    writeFileSync(join(work, "policies", "release.toml"), '[[trace_rule]]\nkind = "only_after"\ntool = "deploy"\nafter = "run_tests"\n');
    const file = join(work, "out.txt");
    const write = {
      id: "w",
      type: "tool_call",
      tool: "write_file",
      parameters: { path: file },
      reversibility: "compensable",
      compensation: { type: "tool", tool: "remove_file", parameters: { path: file } },
    };
    const db = join(work, "car.db");
    const args = (p: string) => [p, "--tools", join(work, "tools.mjs"), "--policies", join(work, "policies"), "--db", db];
    // deploy is full_access: approved once, so the trace rule and the compensation are what these runs show.
    const deploy = operationFingerprint(parseProposal({ actions: [{ id: "d", type: "tool_call", tool: "deploy" }] }).actions[0]!);
    expect((await runCar(["approvals", "approve", deploy, "--tier", "full_access", "--db", db], { env: { CAR_HOME: carHome } })).code).toBe(0);

    const denied = writeProposal("denied.json", [write, { id: "d", type: "tool_call", tool: "deploy", dependencies: ["w"] }]);
    const r1 = await runCar(["run", ...args(denied)], { env: { CAR_HOME: carHome } });
    expect(r1.code).toBe(1);
    expect(r1.stderr).toContain("verify: error d: trace_rule:only_after(deploy,run_tests)");
    expect(r1.stderr).toContain(
      "⛔ d (deploy) denied by policy trace_rule:only_after(deploy,run_tests): 'deploy' may run only after 'run_tests' succeeded in this proposal",
    );
    // Without --rollback compensate the file written before the abort stays.
    expect(existsSync(file)).toBe(true);
    rmSync(file);

    const failing = writeProposal("failing.json", [
      write,
      { id: "t", type: "tool_call", tool: "run_tests", dependencies: ["w"] },
      { id: "d", type: "tool_call", tool: "deploy", dependencies: ["t"] },
    ]);
    const r2 = await runCar(["run", ...args(failing), "--rollback", "compensate"], { env: { CAR_HOME: carHome } });
    expect(r2.code).toBe(1);
    expect(existsSync(file)).toBe(false);
    expect(r2.stderr).toContain("↶ w (write_file) compensating with remove_file");
    expect(r2.stderr).toContain("↶ w (write_file) compensated");
    expect(r2.stdout).toMatch(
      /w\s+succeeded.*\[rolled back, compensated\] proposal aborted; state effects were rolled back; external effects were undone by its compensation/,
    );
    expect(r2.stdout).toMatch(/t\s+succeeded.*external effects remain: the action is irreversible/);
    const json = await runCar(["run", ...args(failing), "--rollback", "compensate", "--json"], { env: { CAR_HOME: carHome } });
    expect(JSON.parse(json.stdout).results[0]).toMatchObject({ rolled_back: true, compensated: true });
    expect((await runCar(["run", ...args(failing), "--rollback", "undo"], { env: { CAR_HOME: carHome } })).code).toBe(2);
  }, 90_000);
});
