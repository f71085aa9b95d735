/**
 * `car approvals approve --uses N --agent AGENT --ttl DURATION` (DECISIONS
 * §22) with `car run` on a real database: `--uses 1` lets exactly one run
 * through, `--agent bot` does not apply to a run that is not bot's, and
 * `--ttl 1h` records an expiry an hour out.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordingWorkspace, type RecordingWorkspace } from "./recording-tools.ts";
import { runCar } from "./run-car.ts";

let ws: RecordingWorkspace;
const env = () => ws.env();

const send = { id: "s", type: "tool_call", tool: "send_email", parameters: { to: "ops@example.com" } };

const proposal = (name: string): string => ws.proposal(name, [send]);
const fired = (): number => ws.fired().length;

beforeAll(() => {
  ws = recordingWorkspace("car-approvals-scope-", ["send_email"]);
});
afterAll(() => ws.remove());

const run = (file: string) => runCar(["run", file, "--tools", ws.toolsFile, "--policies", ws.root], { env: env() });

async function fingerprintOf(file: string): Promise<string> {
  const blocked = await run(file);
  expect(blocked.code).toBe(1);
  return /approval needed: s fingerprint ([0-9a-f]{64})/.exec(blocked.stderr)![1]!;
}

describe("car approvals approve with a scope", () => {
  it("--uses 1 allows exactly one execution", async () => {
    const file = proposal("once");
    const fingerprint = await fingerprintOf(file);
    const approved = await runCar(["approvals", "approve", fingerprint, "--uses", "1", "--ttl", "1h"], { env: env() });
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toMatch(/until \S+; 1 use\(s\)/);
    const before = fired();
    expect((await run(file)).code).toBe(0);
    expect((await run(file)).code).toBe(1);
    expect(fired() - before).toBe(1);
    const listed = await runCar(["audit", "query", "--kind", "approval_recorded", "--json"], { env: env() });
    const recorded = listed.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { data: { uses?: number; expires_at: number; approval_id: number } });
    const mine = recorded.find((e) => e.data.uses === 1)!;
    expect(mine.data.expires_at - Date.now()).toBeGreaterThan(3_500_000);
    expect(mine.data.expires_at - Date.now()).toBeLessThanOrEqual(3_600_000);
  }, 60_000);

  it("--agent bot does not apply to a run that is not bot's", async () => {
    const file = proposal("bots-only");
    const fingerprint = await fingerprintOf(file);
    expect((await runCar(["approvals", "approve", fingerprint, "--agent", "bot"], { env: env() })).code).toBe(0);
    const before = fired();
    expect((await run(file)).code).toBe(1);
    expect(fired()).toBe(before);
  }, 60_000);

  it("refuses a malformed --uses or --ttl", async () => {
    const fp = "a".repeat(64);
    for (const bad of [
      ["--uses", "0"],
      ["--uses", "x"],
      ["--ttl", "1y"],
      ["--ttl", "0"],
    ]) {
      const out = await runCar(["approvals", "approve", fp, "--tier", "full_access", ...bad], { env: env() });
      expect(out.code, bad.join(" ")).toBe(2);
    }
  }, 60_000);
});
