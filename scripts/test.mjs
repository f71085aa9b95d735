#!/usr/bin/env node
// Runs every package's tests through turbo, then prints one closing line,
// `N passed, N failed`, summed from each package's vitest JSON report. Exits
// non-zero when any test (or any test file) failed, or when turbo did.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const dirs = ["packages", "apps", "examples"].flatMap((g) => readdirSync(join(root, g)).map((d) => join(root, g, d))).concat(join(root, "tests"));
const reports = dirs.map((d) => join(d, ".vitest-results.json"));
for (const r of reports) rmSync(r, { force: true });

const turbo = spawnSync("npx", ["turbo", "run", "test", "--continue", ...process.argv.slice(2)], { cwd: root, stdio: "inherit" });

let passed = 0;
let failed = 0;
let skipped = 0;
const missing = [];
for (const [i, report] of reports.entries()) {
  if (!existsSync(report)) {
    if (existsSync(join(dirs[i], "vitest.config.ts"))) missing.push(dirs[i]);
    continue;
  }
  const r = JSON.parse(readFileSync(report, "utf8"));
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  skipped += r.numPendingTests + (r.numTodoTests ?? 0);
  // A test file that fails to load has no tests to count: count it as a failure.
  failed += r.testResults.filter((f) => f.status === "failed" && f.assertionResults.length === 0).length;
}
for (const dir of missing) console.error(`no test report from ${dir}`);
failed += missing.length;
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(turbo.status !== 0 || failed > 0 ? 1 : 0);
