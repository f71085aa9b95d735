/**
 * `car run` under the approval gate (DECISIONS §16), with real program
 * tools and a real SQLite file: every run starts at the standing tier
 * `sandbox_edit`; a proposal with one action above it is rejected whole and
 * no tool fires; `car approvals approve` records the decision and the same
 * run passes; `car approvals reject` makes it a denial; `--tier` moves the
 * standing tier.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordingWorkspace, type RecordingWorkspace } from "./recording-tools.ts";
import { runCar } from "./run-car.ts";

let ws: RecordingWorkspace;
const env = () => ws.env();

const read = { id: "r", type: "tool_call", tool: "read_file", parameters: { path: "a.txt" } };
const write = { id: "w", type: "tool_call", tool: "write_file", parameters: { path: "b.txt" }, dependencies: ["r"] };
const send = { id: "s", type: "tool_call", tool: "send_email", parameters: { to: "ops@example.com" }, dependencies: ["w"] };

const proposal = (name: string, actions: unknown[]): string => ws.proposal(name, actions);
const fired = (): string[] => ws.fired();

beforeAll(() => {
  ws = recordingWorkspace("car-run-gate-", ["read_file", "write_file", "send_email"]);
});
afterAll(() => ws.remove());

const run = (file: string, ...extra: string[]) => runCar(["run", file, "--tools", ws.toolsFile, "--policies", ws.root, ...extra], { env: env() });

describe("car run under the approval gate", () => {
  it("rejects the whole proposal when its third action needs full_access, then runs everything once it is approved", async () => {
    const file = proposal("notify", [read, write, send]);
    const blocked = await run(file);
    expect(blocked.code).toBe(1);
    expect(fired()).toEqual([]);
    expect(blocked.stdout).toContain("0 executed, 3 rejected, 0 skipped; 0 tool calls");
    const named = /approval needed: s fingerprint ([0-9a-f]{64}) requires full_access, granted sandbox_edit/.exec(blocked.stderr);
    expect(named, blocked.stderr).not.toBeNull();
    const fingerprint = named![1]!;
    expect(blocked.stderr).toContain(`approve: car approvals approve ${fingerprint}`);
    // Only the action above the standing tier is named: the read and the write are within sandbox_edit.
    expect(blocked.stderr.match(/approval needed:/g)).toHaveLength(1);

    // An approval below the tier the gate asked for would not count, so it is refused.
    const low = await runCar(["approvals", "approve", fingerprint, "--tier", "sandbox_edit"], { env: env() });
    expect(low.code).toBe(2);
    expect(low.stderr).toContain("the operation needs full_access");
    const approved = await runCar(["approvals", "approve", fingerprint, "--by", "alice"], { env: env() });
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain(`approved send_email up to full_access (fingerprint ${fingerprint}) by alice`);

    const ran = await run(file);
    expect(ran.code, ran.stderr).toBe(0);
    expect(fired()).toEqual(["read_file", "write_file", "send_email"]);

    // The decision is on the record, in the hash chain.
    const audit = await runCar(["audit", "query", "--kind", "approval_recorded", "--json"], { env: env() });
    const recorded = audit.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(recorded.map((e) => e.data)).toEqual([
      expect.objectContaining({ fingerprint, decision: "approved", reviewer: "alice", required_tier: "full_access" }),
    ]);
  }, 120_000);

  it("a recorded rejection denies the operation; --tier read_only gates a write; --agent applies its posture", async () => {
    ws.clearFired();
    const file = proposal("mail", [{ ...send, parameters: { to: "all@example.com" }, dependencies: [] }]);
    const fingerprint = /fingerprint ([0-9a-f]{64})/.exec((await run(file)).stderr)![1]!;
    const rejected = await runCar(["approvals", "reject", fingerprint, "--by", "bob", "--reason", "not today"], { env: env() });
    expect(rejected.code, rejected.stderr).toBe(0);
    const denied = await run(file);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain(`approval denied: s fingerprint ${fingerprint} requires full_access, granted sandbox_edit (rejected by bob)`);
    expect(denied.stderr).not.toContain("approve: car approvals approve");

    const writes = proposal("writes", [read, write]);
    const gated = await run(writes, "--tier", "read_only");
    expect(gated.code).toBe(1);
    expect(gated.stderr).toMatch(/approval needed: w fingerprint [0-9a-f]{64} requires sandbox_edit, granted read_only/);
    expect(fired()).toEqual([]);
    expect((await run(writes)).code).toBe(0);
    expect(fired()).toEqual(["read_file", "write_file"]);
    expect((await run(writes, "--tier", "root")).code).toBe(2);
    // An agent's posture refines the gate: always_allow for full_access runs a send nobody approved.
    expect((await runCar(["approvals", "set-posture", "notifier", "always_allow", "--tier", "full_access"], { env: env() })).code).toBe(0);
    const news = proposal("news", [{ ...send, parameters: { to: "news@example.com" }, dependencies: [] }]);
    expect((await run(news)).code).toBe(1);
    expect((await run(news, "--agent", "notifier")).code).toBe(0);
    expect(fired()).toEqual(["read_file", "write_file", "send_email"]);
    // A fingerprint no gated run asked about needs an explicit tier.
    const unknown = await runCar(["approvals", "approve", "a".repeat(64)], { env: env() });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("pass --tier");
  }, 120_000);
});
