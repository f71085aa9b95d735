/**
 * The engine's own backends run the public store suite
 * (`src/backends/shared/store-conformance.ts`) as vitest tests: one test
 * per check. A durable harness must pass every check; a non-durable one
 * passes the core checks, and one test pins that each durable check reports
 * itself skipped with its reason — never silently passed.
 */
import { describe, expect, it } from "vitest";
import { runStoreCheck, STORE_CHECKS, type StoreHarness } from "../../src/backends/shared/store-conformance.ts";

export function describeRuntimeStoreConformance(name: string, durable: boolean, makeHarness: () => StoreHarness | Promise<StoreHarness>): void {
  describe(`RuntimeStore conformance: ${name}`, () => {
    for (const check of STORE_CHECKS) {
      if (check.durable !== undefined && !durable) continue;
      it(check.name, async () => {
        const result = await runStoreCheck(check, makeHarness);
        expect(result.error ?? result.reason ?? "").toBe("");
        expect(result.status).toBe("passed");
      });
    }
    if (!durable) {
      it("reports every durable check as skipped, with the reason", async () => {
        const durableChecks = STORE_CHECKS.filter((c) => c.durable !== undefined);
        expect(durableChecks.length).toBeGreaterThan(0);
        for (const check of durableChecks) {
          expect(await runStoreCheck(check, makeHarness)).toMatchObject({ status: "skipped", reason: expect.stringContaining("not durable") });
        }
      });
    }
  });
}
