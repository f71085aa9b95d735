/**
 * `car run` reads the run's report, not the result's prose: a commit the
 * database refused (another `car run` wrote the key it read, mid-run) is a
 * "commit refused:" line and the conflict's exit status; a skip action whose
 * tool failed is a warning, and the run still exits 0.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CAR_NODE_ARGS, runCar } from "./run-car.ts";

let root: string;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "car-run-outcome-")));
  writeFileSync(join(root, "noop.mjs"), "export function noop() {\n  return null;\n}\n");
  writeFileSync(
    join(root, "deposit.json"),
    JSON.stringify({ id: "deposit", actions: [{ id: "w", type: "state_write", parameters: { key: "balance", value: 200 } }] }),
  );
  // `bump` is another process committing to the same database while the outer run waits in its tool.
  writeFileSync(
    join(root, "tools.mjs"),
    `import { execFileSync } from "node:child_process";
export function bump() {
  execFileSync(process.execPath, ${JSON.stringify([...CAR_NODE_ARGS, "run", join(root, "deposit.json"), "--tools", join(root, "noop.mjs"), "--db", join(root, "car.db")])}, { env: { ...process.env, CAR_HOME: ${JSON.stringify(root)} }, stdio: ["ignore", "ignore", "inherit"] });
  return null;
}
export function broken() {
  throw new Error("it broke");
}
export function fine() {
  return "ok";
}
`,
  );
  writeFileSync(join(root, "state.json"), JSON.stringify({ balance: 100 }));
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("car run's outcome", () => {
  it("a commit the database refused: the refusal line, the conflict's exit status, and the run rolled back", async () => {
    const proposal = join(root, "spend.json");
    writeFileSync(
      proposal,
      JSON.stringify({
        id: "spend",
        actions: [{ id: "check", type: "tool_call", tool: "bump", parameters: {}, read_set: ["balance"], expected_effects: { balance: 50 } }],
      }),
    );
    const env = { CAR_HOME: root };
    const r = await runCar(["run", proposal, "--tools", join(root, "tools.mjs"), "--db", join(root, "car.db"), "--state", join(root, "state.json"), "--json"], {
      env,
      timeoutMs: 60_000,
    });
    expect(r.stderr).toContain("commit refused: state the proposal read changed before it committed: balance — every change was rolled back (stale_read)");
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).results[0]).toMatchObject({ status: "succeeded", rolled_back: true });
  }, 90_000);

  it("a skip action whose tool failed is a warning, and the run exits 0", async () => {
    const proposal = join(root, "skip.json");
    writeFileSync(
      proposal,
      JSON.stringify({
        id: "skip",
        actions: [
          { id: "try", type: "tool_call", tool: "broken", parameters: {}, failure_behavior: "skip" },
          { id: "then", type: "tool_call", tool: "fine", parameters: {} },
        ],
      }),
    );
    const r = await runCar(["run", proposal, "--tools", join(root, "tools.mjs"), "--db", ":memory:"], { env: { CAR_HOME: root } });
    expect(r.stderr).toContain("warning: 1 skip action failed and was skipped: try");
    expect(r.code).toBe(0);
  }, 60_000);
});
