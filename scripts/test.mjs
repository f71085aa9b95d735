#!/usr/bin/env node
// Runs every package's tests through turbo, then prints one closing line,
// `N passed, N failed, N skipped`, summed from each package's vitest JSON
// report. Exits non-zero when any test (or any test file) failed, or when
// turbo did. Every failed and skipped test is listed by name; under CI=true a skip is a
// failure (CI installs everything the tests need, so nothing may skip).
import { spawnSync } from "node:child_process";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tally } from "./test-tally.mjs";

const root = new URL("..", import.meta.url).pathname;
const dirs = ["packages", "apps", "examples"].flatMap((g) => readdirSync(join(root, g)).map((d) => join(root, g, d))).concat(join(root, "tests"));
const reports = dirs.map((d) => join(d, ".vitest-results.json"));
for (const r of reports) rmSync(r, { force: true });

const turbo = spawnSync("npx", ["turbo", "run", "test", "--continue", ...process.argv.slice(2)], { cwd: root, stdio: "inherit" });

const ci = process.env.CI === "true" || process.env.CI === "1";
const result = tally(
  dirs.map((dir, i) => ({ dir, report: reports[i] })),
  { ci, root },
);
for (const dir of result.missing) console.error(`no test report from ${dir}`);
if (result.skipped.length > 0) {
  console.error(`${ci ? "skipped tests fail under CI=true" : "skipped tests"} (each test prints why it skipped):`);
  for (const name of result.skipped) console.error(`  ${name}`);
}
if (result.failures.length > 0) {
  console.error("failed tests:");
  for (const name of result.failures) console.error(`  ${name}`);
}
console.log(`${result.passed} passed, ${result.failed} failed, ${result.skipped.length} skipped`);
process.exit(turbo.status !== 0 || result.fails ? 1 : 0);
