/**
 * The SQLite store runs the public store suite (`@car/conformance/store`):
 * one vitest test per check, every check passing (durable ones included);
 * then the suite as a store author runs it, in one report; and a durable
 * store without a hash chain has the chain check skipped with the reason.
 */
import { tempDatabase } from "@car/test-kit/temp-database";
import { runStoreCheck, runStoreConformance, STORE_CHECKS, type StoreHarness } from "@car/conformance/store";
import type { RuntimeStore } from "@car/engine";
import { describe, expect, it } from "vitest";
import { sqlite } from "./sqlite-store.ts";

const harness = (): StoreHarness => {
  const temp = tempDatabase();
  return { durable: true, open: (clock) => sqlite(temp.db, { clock }), dispose: () => temp.remove() };
};

describe("RuntimeStore conformance: sqlite", () => {
  for (const check of STORE_CHECKS) {
    it(check.name, async () => {
      const result = await runStoreCheck(check, harness);
      expect(result.error ?? result.reason ?? "").toBe("");
      expect(result.status).toBe("passed");
    });
  }
});

describe("the public store suite on SQLite", () => {
  it("passes a durable SQLite store on every check", async () => {
    const report = await runStoreConformance("sqlite", harness);
    expect(report.results.filter((r) => r.status !== "passed")).toEqual([]);
    expect(report.passed).toBe(STORE_CHECKS.length);
  });

  it("claims durability only where the store offers the parts: a durable store without a hash chain skips the chain check", async () => {
    const temp = tempDatabase();
    try {
      const report = await runStoreConformance(
        "no-chain",
        () => ({
          durable: true,
          open: (clock) => {
            const store = sqlite(temp.db, { clock });
            const noChain: RuntimeStore = {
              state: store.state,
              events: store.events,
              approvals: store.approvals,
              commitProposal: (c) => store.commitProposal(c),
              close: () => store.close(),
            };
            return noChain;
          },
          dispose: () => {},
        }),
        { only: ["chains every event"] },
      );
      expect(report.results).toEqual([expect.objectContaining({ status: "skipped", reason: "the store offers no verifyChain" })]);
    } finally {
      temp.remove();
    }
  });
});
