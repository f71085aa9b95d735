import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isCarError } from "@car/ir";
import { listCursor, readListCursor } from "./run-pages.ts";

describe("runs.list cursors", () => {
  it("round-trip every run's sort key", () => {
    fc.assert(
      fc.property(fc.date({ noInvalidDate: true }), fc.string({ maxLength: 256 }), (at, run_id) => {
        const run = { run_id, agent_id: "a", intent: "i", started_at: at.toISOString(), status: "in_progress" as const, turn_count: 0 };
        expect(readListCursor({ cursor: listCursor(run) })).toEqual({ started_at: run.started_at, run_id });
      }),
    );
  });

  it("read any other string as the first page ('') or refuse it with invalid_params, never another error", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.base64String(),
          fc.json().map((j) => Buffer.from(j).toString("base64url")),
        ),
        (cursor) => {
          try {
            const key = readListCursor({ cursor });
            if (cursor === "") expect(key).toBeUndefined();
            else expect(typeof key?.started_at === "string" && typeof key.run_id === "string").toBe(true);
          } catch (error) {
            expect(isCarError(error) && error.code === "invalid_params", String(error)).toBe(true);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
