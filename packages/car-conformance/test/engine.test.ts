import { describe, expect, it } from "vitest";
import { engineAdapter, loadCapabilities, runConformance } from "../src/index.ts";
import type { CapabilityReport } from "../src/index.ts";


function describeFailures(cap: CapabilityReport): string[] {
  return cap.scenarios
    .filter((s) => s.status === "failed")
    .map((s) => `${s.id}: ${s.failures.map((f) => `${f.where} ${f.path}: ${f.message} (expected ${JSON.stringify(f.expected)}, got ${JSON.stringify(f.actual)})`).join("; ")}`);
}

describe("RuntimeBench against @car/engine in process", () => {
  for (const cap of loadCapabilities()) {
    it(`${cap.capability} (${cap.required ? "required" : "optional"})`, async () => {
      const report = await runConformance({ ...engineAdapter(), capabilities: [cap.capability] });
      const result = report.capabilities[0]!;
      expect(describeFailures(result)).toEqual([]);
      expect(result.passed).toBe(cap.scenarios.length);
      // The engine has every feature the suite knows: nothing may be skipped in process.
      expect(result.skipped).toBe(0);
    }, 120_000);
  }
});
