/**
 * RuntimeBench against @car/engine in process: every scenario of every
 * capability passes, one test per scenario — so a failure names its
 * scenario, and the mutation run (stryker.config.mjs) re-runs only the
 * scenarios that reach a mutated line.
 */
import { describe, expect, it } from "vitest";
import { ENGINE_FEATURES, engineAdapter, loadCapabilities, runConformance } from "../src/index.ts";

describe("RuntimeBench against @car/engine in process", () => {
  // Every capability the engine declares (ENGINE_FEATURES): required and optional, supervision included.
  for (const cap of loadCapabilities().filter((c) => c.required || ENGINE_FEATURES.includes(c.capability))) {
    describe(`${cap.capability} (${cap.required ? "required" : "optional"})`, () => {
      for (const scenario of cap.scenarios) {
        it(scenario.id, async () => {
          const report = await runConformance({ ...engineAdapter(), suite: [{ ...cap, scenarios: [scenario] }] });
          const result = report.capabilities[0]!.scenarios[0]!;
          expect(
            result.failures.map((f) => `${f.where} ${f.path}: ${f.message} (expected ${JSON.stringify(f.expected)}, got ${JSON.stringify(f.actual)})`),
          ).toEqual([]);
          // What the engine declares is checked, never skipped, in process.
          expect(result.status).toBe("passed");
        });
      }
    });
  }
});
