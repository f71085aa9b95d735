/**
 * `car run` as a person watches it: the pre-run verify sees the state in
 * --db, and progress shows retries, rate-limit waits and policy denials as
 * they happen.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCar } from "./run-car.ts";

let root: string;
let carHome: string;
let tools: string;

const TOOLS = `
let calls = 0;
export const flaky = async () => {
  calls += 1;
  if (calls === 1) throw new Error("transient glitch");
  return { ok: true, calls };
};
export const limited = { schema: { name: "limited", rate_limit: { max_calls: 1, interval_secs: 1 } }, handler: async () => ({ ok: true }) };
export const shell = async () => ({ ran: true });
`;

function proposalFile(name: string, actions: unknown[]): string {
  const file = join(root, name);
  writeFileSync(file, JSON.stringify({ id: name.replace(/\W/g, "").slice(0, 12), actions }));
  return file;
}

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "car-run-ux-")));
  carHome = join(root, "home");
  mkdirSync(carHome);
  tools = join(root, "tools.mjs");
  writeFileSync(tools, TOOLS);
  mkdirSync(join(root, "policies"));
  writeFileSync(join(root, "policies", "deny.toml"), '[[deny_tool_param]]\ntool = "shell"\nparam = "command"\ncontains = "rm -rf"\n');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const run = (args: string[]) => runCar(["run", ...args, "--tools", tools, "--policies", join(root, "policies")], { env: { CAR_HOME: carHome }, cwd: root });

describe("car run progress", () => {
  it("shows a retry with its attempt, delay and error, before the success", async () => {
    const p = proposalFile("retry.json", [{ id: "fetch", type: "tool_call", tool: "flaky", failure_behavior: "retry", max_retries: 2 }]);
    const r = await run([p, "--db", ":memory:"]);
    expect(r.code).toBe(0);
    const retry = r.stderr.indexOf("↻ fetch (flaky) retry 2 in 100 ms: transient glitch");
    expect(retry).toBeGreaterThan(-1);
    expect(retry).toBeLessThan(r.stderr.indexOf("✓ fetch"));
  });

  it("shows a rate-limit wait", async () => {
    const p = proposalFile("wait.json", [
      { id: "one", type: "tool_call", tool: "limited" },
      { id: "two", type: "tool_call", tool: "limited", dependencies: ["one"] },
    ]);
    const r = await run([p, "--db", ":memory:"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/⏸ two \(limited\) waiting \d+ ms \(rate limit\)/);
  });

  it("shows a policy denial naming the rule", async () => {
    const p = proposalFile("deny.json", [{ id: "wipe", type: "tool_call", tool: "shell", parameters: { command: "rm -rf /" } }]);
    // `rm -rf` is full_access (DECISIONS §16): run as an agent whose posture allows it, so the policy is what decides.
    const db = join(root, "trusted.db");
    expect((await runCar(["approvals", "set-posture", "ops", "always_allow", "--db", db], { env: { CAR_HOME: carHome } })).code).toBe(0);
    const r = await run([p, "--db", db, "--agent", "ops"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/⛔ wipe \(shell\) denied by policy deny_tool_param:shell\.command/);
  });
});

describe("car run's pre-run verify", () => {
  it("checks preconditions against the state in --db, not an empty state", async () => {
    const db = join(root, "state.db");
    const write = proposalFile("write.json", [{ id: "mark", type: "state_write", parameters: { key: "ready", value: true } }]);
    expect((await run([write, "--db", db])).code).toBe(0);
    const check = proposalFile("check.json", [{ id: "gate", type: "assertion", preconditions: [{ key: "ready", operator: "eq", value: true }] }]);
    const r = await run([check, "--db", db]);
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain("verify: error");
    expect(r.stdout).toMatch(/gate\s+succeeded/);
  });
});
