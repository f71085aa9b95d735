// Sums vitest JSON reports into one verdict for scripts/test.mjs: counts,
// the names of skipped and failed tests (a failure's first message line, so
// the tail of a CI log says what broke), and whether the run fails. Under CI a skipped
// test fails the run: CI installs everything the tests need, so a skip there
// means a check silently did not run.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";

/**
 * @param {{ dir: string, report: string }[]} packages each package directory and its report path
 * @param {{ ci: boolean, root: string }} options
 */
export function tally(packages, { ci, root }) {
  let passed = 0;
  let failed = 0;
  const skipped = [];
  const failures = [];
  const missing = [];
  for (const { dir, report } of packages) {
    if (!existsSync(report)) {
      if (existsSync(join(dir, "vitest.config.ts"))) missing.push(dir);
      continue;
    }
    const r = JSON.parse(readFileSync(report, "utf8"));
    passed += r.numPassedTests;
    failed += r.numFailedTests;
    for (const file of r.testResults) {
      const where = file.name.startsWith(root) ? file.name.slice(root.length) : file.name;
      for (const t of file.assertionResults) {
        if (t.status === "failed") failures.push(`${where} > ${t.fullName}: ${firstLine(t.failureMessages?.[0])}`);
        else if (t.status !== "passed") skipped.push(`${where} > ${t.fullName} (${t.status})`);
      }
      // A test file that fails to load has no tests to count: count it as a failure.
      if (file.status === "failed" && file.assertionResults.length === 0) {
        failed++;
        failures.push(`${where}: ${firstLine(file.message)}`);
      }
    }
  }
  failed += missing.length;
  return { passed, failed, skipped, failures, missing, fails: failed > 0 || (ci && skipped.length > 0) };
}

/** The first non-empty line of a failure message, without colour codes. */
function firstLine(message) {
  if (typeof message !== "string") return "(no message)";
  const line = stripVTControlCharacters(message)
    .split("\n")
    .find((l) => l.trim() !== "");
  return line === undefined ? "(no message)" : line.trim();
}
