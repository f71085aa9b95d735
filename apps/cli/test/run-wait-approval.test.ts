/**
 * `car run --wait-for-approval` and `car approvals default|get`, with real
 * program tools, real child processes and a real SQLite file: a run that
 * needs an approval waits (nothing fires) until `car approvals approve` in
 * another process records it, or is rejected at its deadline; the default
 * posture moves what an agent without one of its own gets.
 */
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAction } from "@car/ir";
import { operationFingerprint } from "@car/policy";
import { recordingWorkspace, type RecordingWorkspace } from "./recording-tools.ts";
import { CAR_NODE_ARGS, runCar } from "./run-car.ts";

let ws: RecordingWorkspace;
const env = () => ws.env();

const proposal = (name: string, actions: unknown[]): string => ws.proposal(name, actions);
const fired = (): string[] => ws.fired();

beforeAll(() => {
  ws = recordingWorkspace("car-run-wait-", ["write_file", "send_email"]);
});
afterAll(() => ws.remove());

const run = (file: string, ...extra: string[]) =>
  runCar(["run", file, "--tools", ws.toolsFile, "--policies", ws.root, ...extra], { env: env(), timeoutMs: 90_000 });

describe("car run --wait-for-approval", () => {
  it("waits, firing nothing, until car approvals approve in another process; the run then passes", async () => {
    const action = { id: "s", type: "tool_call", tool: "send_email", parameters: { to: "ops@example.com" } };
    const file = proposal("wait-send", [action]);
    // The operation's fingerprint, as the gate computes it (and as the waiting run prints it).
    const fingerprint = operationFingerprint(parseAction(action));
    const child = spawn(process.execPath, [...CAR_NODE_ARGS, "run", file, "--tools", ws.toolsFile, "--policies", ws.root, "--wait-for-approval", "60s"], {
      env: { ...process.env, NO_COLOR: "1", ...env() },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    // The run says when its wait opens; nothing may fire meanwhile.
    await expect.poll(() => stderr, { timeout: 60_000, interval: 100 }).toContain("waiting for approval");
    await new Promise((r) => setTimeout(r, 300));
    expect(fired()).toEqual([]);
    const approved = await runCar(["approvals", "approve", fingerprint, "--tier", "full_access"], { env: env(), timeoutMs: 40_000 });
    expect(approved.code, approved.stderr).toBe(0);
    const code = await exited;
    expect(code, stderr).toBe(0);
    expect(stderr).toContain(`waiting for approval: s (send_email) fingerprint ${fingerprint}`);
    expect(stderr).toContain(`approve: car approvals approve ${fingerprint}`);
    expect(stderr).not.toContain("approval needed");
    expect(fired()).toEqual(["send_email"]);
  }, 120_000);

  it("is rejected at the deadline, nothing fired; a bad duration is a usage error", async () => {
    const file = proposal("wait-deadline", [{ id: "s", type: "tool_call", tool: "send_email", parameters: { to: "late@example.com" } }]);
    const before = fired().length;
    const late = await run(file, "--wait-for-approval", "700ms");
    expect(late.code).toBe(1);
    expect(late.stdout + late.stderr).toContain("no decision within 700 ms");
    expect(fired()).toHaveLength(before);
    const bad = await run(file, "--wait-for-approval", "soon");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--wait-for-approval must be a duration");
  }, 60_000);
});

describe("car approvals default | get", () => {
  it("a preset moves an agent without its own posture; get prints the policy", async () => {
    const file = proposal("agent-write", [{ id: "w", type: "tool_call", tool: "write_file", parameters: { path: "b.txt" } }]);
    expect((await run(file, "--agent", "scribe")).code).toBe(0);
    const set = await runCar(["approvals", "default", "cautious"], { env: env() });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain("default posture: read_only always_allow, sandbox_edit require_approval, full_access deny");
    const gated = await run(
      proposal("agent-write-2", [{ id: "w", type: "tool_call", tool: "write_file", parameters: { path: "b.txt" } }]),
      "--agent",
      "scribe",
    );
    expect(gated.code).toBe(1);
    expect(gated.stderr).toContain("approval needed");
    const one = await runCar(["approvals", "default", "sandbox_edit", "always_allow"], { env: env() });
    expect(one.code, one.stderr).toBe(0);
    const got = await runCar(["approvals", "get", "--json"], { env: env() });
    expect(JSON.parse(got.stdout).default).toEqual({ read_only: "always_allow", sandbox_edit: "always_allow", full_access: "deny" });
    expect((await runCar(["approvals", "default", "reckless"], { env: env() })).code).toBe(2);
  }, 60_000);
});
