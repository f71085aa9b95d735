/**
 * RuntimeBench against @car/engine in process: every scenario of every
 * capability passes, one test per scenario — so a failure names its
 * scenario, and the mutation run (stryker.config.mjs) re-runs only the
 * scenarios that reach a mutated line.
 */
import { describe, expect, it } from "vitest";
import { engineAdapter, loadCapabilities, runConformance } from "../src/index.ts";

describe("RuntimeBench against @car/engine in process", () => {
  for (const cap of loadCapabilities()) {
    describe(`${cap.capability} (${cap.required ? "required" : "optional"})`, () => {
      for (const scenario of cap.scenarios) {
        it(scenario.id, async () => {
          const report = await runConformance({ ...engineAdapter(), suite: [{ ...cap, scenarios: [scenario] }] });
          const result = report.capabilities[0]!.scenarios[0]!;
          expect(
            result.failures.map((f) => `${f.where} ${f.path}: ${f.message} (expected ${JSON.stringify(f.expected)}, got ${JSON.stringify(f.actual)})`),
          ).toEqual([]);
          // The engine declares every feature the suite knows: nothing may be skipped in process.
          expect(result.status).toBe("passed");
        });
      }
    });
  }
});
