/**
 * The store suite as a store author runs it, from `@car/conformance/store`
 * with no test framework: an in-memory store passes the core and has every
 * durable check skipped with the reason, and a store that loses commits fails
 * the checks that observe it. The durable stores run it in their own
 * packages (`@car/store-sqlite`, `@car/store-postgres`).
 */
import { describe, expect, it } from "vitest";
import { inMemoryStore, type RuntimeStore } from "@car/engine";
import { runStoreConformance, STORE_CHECKS } from "@car/conformance/store";

describe("the public store suite", () => {
  it("never passes a durability check for a store that is not durable: it is skipped with the reason", async () => {
    const report = await runStoreConformance("in-memory", () => ({ durable: false, open: (clock) => inMemoryStore({ clock }), dispose: () => {} }));
    const durable = STORE_CHECKS.filter((c) => c.durable !== undefined).map((c) => c.name);
    expect(durable.length).toBeGreaterThanOrEqual(5);
    for (const r of report.results) {
      if (durable.includes(r.name)) expect(r).toMatchObject({ status: "skipped", reason: expect.stringContaining("not durable") });
      else expect(r.status).toBe("passed");
    }
    expect(report).toMatchObject({ failed: 0, skipped: durable.length });
  });

  it("fails a store that acknowledges commits without applying them, naming the checks", async () => {
    const lossy = (store: RuntimeStore): RuntimeStore => ({
      ...store,
      state: store.state,
      events: store.events,
      approvals: store.approvals,
      commitProposal: () => [],
    });
    const report = await runStoreConformance("lossy", () => ({ durable: false, open: (clock) => lossy(inMemoryStore({ clock })), dispose: () => {} }));
    const failed = report.results.filter((r) => r.status === "failed");
    expect(failed.map((r) => r.name)).toContain("commits a proposal's writes with attribution, and records its events in order");
    expect(failed.every((r) => typeof r.error === "string" && r.error.length > 0)).toBe(true);
  });
});
