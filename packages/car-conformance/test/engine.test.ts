import { describe, expect, it } from "vitest";
import { engineAdapter, loadCapabilities, runConformance } from "../src/index.ts";
import type { ConformanceReport } from "../src/index.ts";

function failuresOf(report: ConformanceReport): string[] {
  return report.capabilities.flatMap((c) =>
    c.scenarios.filter((s) => s.status === "failed").map((s) => `${s.id}: ${s.failures.map((f) => `${f.where} ${f.path}: ${f.message} (expected ${JSON.stringify(f.expected)}, got ${JSON.stringify(f.actual)})`).join("; ")}`),
  );
}

describe("RuntimeBench against @car/engine in process", () => {
  for (const cap of loadCapabilities()) {
    it(`${cap.capability} (${cap.required ? "required" : "optional"})`, async () => {
      const report = await runConformance({ ...engineAdapter(), capabilities: [cap.capability] });
      expect(failuresOf(report)).toEqual([]);
      expect(report.passed).toBeGreaterThan(0);
    }, 120_000);
  }
});
