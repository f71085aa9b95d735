/**
 * Scenarios for rules the engine does not follow yet (scenarios/pending):
 * each is expected to fail against @car/engine today. When an engine change
 * makes one pass, its test here fails — move the scenario into its
 * thematic capability file, where it becomes required.
 */
import { describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import { engineAdapter, loadCapabilities, runConformance } from "../src/index.ts";

const PENDING_DIR = fileURLToPath(new URL("../scenarios/pending/", import.meta.url));

describe("pending scenarios still fail against @car/engine", () => {
  for (const cap of loadCapabilities(PENDING_DIR)) {
    for (const scenario of cap.scenarios) {
      it(scenario.id, async () => {
        const report = await runConformance({ ...engineAdapter(), features: [cap.capability], suite: [{ ...cap, scenarios: [scenario] }] });
        const result = report.capabilities[0]!.scenarios[0]!;
        expect(result.failures.filter((f) => f.where === "setup")).toEqual([]);
        expect(result.status, `${scenario.id} passes now: move it out of scenarios/pending`).toBe("failed");
      });
    }
  }
});
