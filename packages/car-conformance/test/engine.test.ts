import { describe, expect, it } from "vitest";
import { engineAdapter, loadCapabilities, runConformance } from "../src/index.ts";
import type { CapabilityReport } from "../src/index.ts";

/**
 * Scenarios @car/engine fails today because the ENGINE deviates from the
 * spec (reported to the engine's owner). They are asserted to fail, so the
 * list cannot silently go stale: a fix makes this test fail until the
 * entry is removed. Nothing here is counted as passing.
 */
const KNOWN_ENGINE_DEVIATIONS: Record<string, string> = {
  // agent-ir-spec.md, Execution outcome event data: output that is not I-JSON is a `validation` failure;
  // the engine accepts a string holding a lone surrogate as a successful output.
  "events.non-i-json-output-validation": "lone-surrogate output accepted",
  // Streaming / long-running contract: a failed detached call reports its error; through the JSON
  // callback the engine reports "[object Object]" instead of the tool's message.
  "detached-tools.failure": "detached failure message lost",
};

function describeFailures(cap: CapabilityReport): string[] {
  return cap.scenarios
    .filter((s) => s.status === "failed" && !(s.id in KNOWN_ENGINE_DEVIATIONS))
    .map((s) => `${s.id}: ${s.failures.map((f) => `${f.where} ${f.path}: ${f.message} (expected ${JSON.stringify(f.expected)}, got ${JSON.stringify(f.actual)})`).join("; ")}`);
}

describe("RuntimeBench against @car/engine in process", () => {
  for (const cap of loadCapabilities()) {
    it(`${cap.capability} (${cap.required ? "required" : "optional"})`, async () => {
      const report = await runConformance({ ...engineAdapter(), capabilities: [cap.capability] });
      const result = report.capabilities[0]!;
      expect(describeFailures(result)).toEqual([]);
      const known = cap.scenarios.map((s) => s.id).filter((id) => id in KNOWN_ENGINE_DEVIATIONS);
      expect(result.scenarios.filter((s) => s.status === "failed").map((s) => s.id)).toEqual(known);
      // The engine has every feature the suite knows: nothing may be skipped in process.
      expect(result.skipped).toBe(0);
    }, 120_000);
  }
});
