/**
 * The engine's in-memory store runs the store suite one vitest test per
 * check: it passes every core check, and every durable check reports itself
 * skipped with its reason — never silently passed.
 */
import { describe, expect, it } from "vitest";
import { inMemoryStore } from "@car/engine";
import { runStoreCheck, STORE_CHECKS, type StoreHarness } from "@car/conformance/store";

const harness = (): StoreHarness => ({ durable: false, open: (clock) => inMemoryStore({ clock }), dispose: () => {} });

describe("RuntimeStore conformance: in-memory", () => {
  for (const check of STORE_CHECKS.filter((c) => c.durable === undefined)) {
    it(check.name, async () => {
      const result = await runStoreCheck(check, harness);
      expect(result.error ?? result.reason ?? "").toBe("");
      expect(result.status).toBe("passed");
    });
  }

  it("reports every durable check as skipped, with the reason", async () => {
    const durableChecks = STORE_CHECKS.filter((c) => c.durable !== undefined);
    expect(durableChecks.length).toBeGreaterThan(0);
    for (const check of durableChecks) {
      expect(await runStoreCheck(check, harness)).toMatchObject({ status: "skipped", reason: expect.stringContaining("not durable") });
    }
  });
});
