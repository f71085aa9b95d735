/**
 * Issue 36 §5: a cross-proposal `transactionCheck` of 50 proposals × 2,000
 * actions ran V8 out of memory at 1 GB. Run in a child process with that heap
 * cap, it now finishes with a bounded report in which every action still
 * appears.
 */
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { CROSS_PROPOSAL_PAIR_BUDGET } from "../src/index.ts";

const require = createRequire(import.meta.url);
const TSX_LOADER = pathToFileURL(require.resolve("tsx")).href;
const MAIN = fileURLToPath(new URL("./transaction-heap-main.ts", import.meta.url));

describe("transactionCheck across many proposals", () => {
  it("50 proposals × 2,000 actions finish under a 1 GB heap with a report linear in the actions", () => {
    const child = spawnSync(process.execPath, ["--max-old-space-size=1024", "--import", TSX_LOADER, "--conditions=source", MAIN, "50", "2000"], {
      encoding: "utf8",
      timeout: 300_000,
    });
    expect(child.stderr).not.toContain("heap out of memory");
    expect(child.status, child.stderr).toBe(0);
    const summary = JSON.parse(child.stdout.trim().split("\n").pop() as string) as { consistent: boolean; conflicts: number; actions_in_conflicts: number };
    expect(summary.consistent).toBe(false);
    // Every one of the 100,000 actions is in some reported conflict, and the report is the budget plus a few per action.
    expect(summary.actions_in_conflicts).toBe(100_000);
    expect(summary.conflicts).toBeLessThanOrEqual(CROSS_PROPOSAL_PAIR_BUDGET + 4 * 100_000);
  });
});
