/**
 * The store suite's dispatch-intent check can fail: a durable SQLite store
 * whose log offers no `persist` (so no intent is written before a call)
 * fails it, while the same store as shipped passes it.
 */
import { expect, it } from "vitest";
import { withoutIntents } from "@car/test-kit/without-intents";
import { sqlite } from "./sqlite-store.ts";
import { tempDatabase } from "@car/test-kit/temp-database";
import { runStoreCheck, STORE_CHECKS } from "@car/conformance/store";

const check = STORE_CHECKS.find((c) => c.name.includes("dispatch intent"))!;

it.each([
  ["as shipped", "passed", false],
  ["without intents", "failed", true],
] as const)("the dispatch-intent check on a durable SQLite store %s: %s", async (_label, status, strip) => {
  const temp = tempDatabase();
  const result = await runStoreCheck(check, () => ({
    durable: true,
    open: (clock) => {
      const store = sqlite(temp.db, { clock });
      return strip ? withoutIntents(store) : store;
    },
    dispose: () => temp.remove(),
  }));
  expect(result.status, result.error).toBe(status);
  if (status === "failed") expect(result.error).toMatch(/intent is on record when it runs/);
});
