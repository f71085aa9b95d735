/**
 * scripts/test-tally.mjs decides whether `pnpm test` (and so `.ci/run`)
 * fails: under CI a skipped test is a failure, locally it is listed.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script without type declarations
import { tally } from "../scripts/test-tally.mjs";

const root = mkdtempSync(join(tmpdir(), "car-tally-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function pkg(name: string, tests: { name: string; status: string; message?: string }[]): { dir: string; report: string } {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "vitest.config.ts"), "");
  const report = join(dir, ".vitest-results.json");
  const count = (s: string) => tests.filter((t) => t.status === s).length;
  writeFileSync(
    report,
    JSON.stringify({
      numPassedTests: count("passed"),
      numFailedTests: count("failed"),
      numPendingTests: count("pending") + count("skipped"),
      testResults: [
        {
          name: join(dir, "a.test.ts"),
          status: count("failed") > 0 ? "failed" : "passed",
          assertionResults: tests.map((t) => ({ fullName: t.name, status: t.status, failureMessages: t.message === undefined ? [] : [t.message] })),
        },
      ],
    }),
  );
  return { dir, report };
}

describe("test tally", () => {
  const clean = pkg("clean", [{ name: "works", status: "passed" }]);
  const skipping = pkg("skipping", [
    { name: "works", status: "passed" },
    { name: "postgres races", status: "skipped" },
  ]);

  it("fails a run with a skipped test under CI, naming the test", () => {
    const result = tally([clean, skipping], { ci: true, root });
    expect(result).toMatchObject({ passed: 2, failed: 0, fails: true });
    expect(result.skipped).toEqual([`/skipping/a.test.ts > postgres races (skipped)`]);
  });

  it("lists the skip but passes locally, and passes a clean run under CI", () => {
    expect(tally([clean, skipping], { ci: false, root })).toMatchObject({ fails: false, skipped: [`/skipping/a.test.ts > postgres races (skipped)`] });
    expect(tally([clean], { ci: true, root })).toMatchObject({ passed: 1, fails: false, skipped: [] });
  });

  it("fails on a failed test, naming it with its message's first line, and on a package that wrote no report", () => {
    const broken = pkg("broken", [{ name: "x", status: "failed", message: "\n\x1b[31mAssertionError: expected 3 to be 4\x1b[39m\n    at a.test.ts:9" }]);
    expect(tally([broken], { ci: false, root })).toMatchObject({
      fails: true,
      failures: ["/broken/a.test.ts > x: AssertionError: expected 3 to be 4"],
    });
    const silent = join(root, "silent");
    mkdirSync(silent);
    writeFileSync(join(silent, "vitest.config.ts"), "");
    expect(tally([{ dir: silent, report: join(silent, ".vitest-results.json") }], { ci: false, root })).toMatchObject({
      failed: 1,
      missing: [silent],
      fails: true,
    });
  });
});
