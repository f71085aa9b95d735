// Sums vitest JSON reports into one verdict for scripts/test.mjs: counts,
// the names of skipped tests, and whether the run fails. Under CI a skipped
// test fails the run: CI installs everything the tests need, so a skip there
// means a check silently did not run.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * @param {{ dir: string, report: string }[]} packages each package directory and its report path
 * @param {{ ci: boolean, root: string }} options
 */
export function tally(packages, { ci, root }) {
  let passed = 0;
  let failed = 0;
  const skipped = [];
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
      for (const t of file.assertionResults) {
        if (t.status !== "passed" && t.status !== "failed")
          skipped.push(`${file.name.startsWith(root) ? file.name.slice(root.length) : file.name} > ${t.fullName} (${t.status})`);
      }
      // A test file that fails to load has no tests to count: count it as a failure.
      if (file.status === "failed" && file.assertionResults.length === 0) failed++;
    }
  }
  failed += missing.length;
  return { passed, failed, skipped, missing, fails: failed > 0 || (ci && skipped.length > 0) };
}
