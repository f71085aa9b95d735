// The README demo (`pnpm demo`): runs examples/deploy under its policies in a
// fresh CAR home, so every run shows the same thing. The deploy action needs
// full_access, which is always a human's decision: the first `car run` is
// stopped by the approval gate before any tool fires; the demo then records
// the approval (`car approvals approve`) and runs the same proposal again,
// where the deploy's resolved form is stopped for an approval of its own.
//
// Usage: node examples/deploy/demo.mjs [CAR COMMAND...]
// (default: node apps/cli/dist/car.mjs, the built CLI)
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = fileURLToPath(new URL("../../", import.meta.url));
const given = process.argv.slice(2);
const [program, ...prefix] = given.length > 0 ? given : [process.execPath, join(repo, "apps/cli/dist/car.mjs")];
const run = ["run", "examples/deploy/proposal.json", "--tools", "examples/deploy/tools.mjs", "--policies", "examples/deploy/policies"];
const args = [...run, "--state", "examples/deploy/state.json"];
const home = mkdtempSync(join(tmpdir(), "car-demo-"));

/** Runs `car ARGS` in the repository with the demo's CAR home; stderr is shown as it comes, stdout is returned too. */
function car(argv, note) {
  process.stdout.write(`\n# ${note}\n$ car ${argv.join(" ")}\n`);
  const r = spawnSync(program, [...prefix, ...argv], {
    cwd: repo,
    env: { ...process.env, CAR_HOME: home },
    stdio: ["ignore", "pipe", "pipe"],
    encoding: "utf8",
  });
  process.stderr.write(r.stderr);
  process.stdout.write(r.stdout);
  return r;
}

try {
  // 1. Admission stops the deploy: full_access is a human's decision. Then its declared form is approved.
  // 2. At dispatch the deploy's `$build.output.artifact` has resolved: approving the template did not approve
  //    what it resolves to (DECISIONS §22), so the resolved operation is stopped and approved in its turn.
  // 3. The same proposal runs.
  const steps = [
    "1. the approval gate: deploy needs full_access, so nothing runs",
    "3. the deploy's artifact has resolved: the resolved operation needs its own approval",
  ];
  let ran;
  for (let round = 0; ; round++) {
    ran = car(args, round < steps.length ? steps[round] : `${round * 2 + 1}. the same proposal runs`);
    const fingerprints = [...ran.stderr.matchAll(/car approvals approve ([0-9a-f]{64})/g)].map((m) => m[1]);
    if (ran.status === 0 || fingerprints.length === 0 || round === steps.length) break;
    for (const fp of fingerprints)
      car(["approvals", "approve", fp, "--by", "demo"], `${round * 2 + 2}. an operator approves the operation (recorded in the audit log)`);
  }
  if (ran.status !== 0) process.stdout.write("\nexpected the proposal to run once its operations were approved\n");
  process.exitCode = ran.status ?? 1;
} finally {
  rmSync(home, { recursive: true, force: true });
}
