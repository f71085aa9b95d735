/**
 * `approvals.latest` on SQLite: µs per call for a fingerprint with a few
 * decisions, keyed store, the gate's hot path (asked once per gated
 * action). Run: `npx tsx --conditions=source bench/approvals-latest.ts`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { sqlite } from "../src/index.ts";

const dir = mkdtempSync(join(tmpdir(), "car-bench-latest-"));
const store = sqlite(join(dir, "car.db"), { auditKeyFile: join(dir, "audit.key") });
for (let i = 0; i < 3; i++)
  await store.approvals.record({ fingerprint: "f", decision: "approved", required_tier: "full_access", reviewer: "ops", decided_at: i + 1, expires_at: null });
for (let i = 0; i < 200; i++)
  await store.approvals.record({
    fingerprint: `other-${i}`,
    decision: "approved",
    required_tier: "full_access",
    reviewer: "ops",
    decided_at: 1,
    expires_at: null,
  });
const n = 20_000;
const runs: number[] = [];
for (let run = 0; run < 5; run++) {
  const start = performance.now();
  for (let i = 0; i < n; i++) await store.approvals.latest("f", 10);
  runs.push(((performance.now() - start) * 1000) / n);
}
runs.sort((a, b) => a - b);
console.log(`approvals.latest: median ${runs[2]!.toFixed(1)} µs per call (5 runs of ${n}: ${runs.map((r) => r.toFixed(1)).join(", ")})`);
await store.close();
rmSync(dir, { recursive: true, force: true });
