import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isCarError } from "@car/ir";
import { MAX_REPLAN_DELAY_MS, MAX_REPLANS, parseReplanConfig } from "./index.ts";

const anyValue = fc.oneof(
  fc.integer({ min: -5, max: 100_000 }),
  fc.double(),
  fc.boolean(),
  fc.string(),
  fc.constant(null),
  fc.array(fc.integer()),
  fc.object(),
);
const field = fc.constantFrom("max_replans", "delay_ms", "verify_before_execute", "replan_on_rejected", "rollback", "maxReplans");

describe("parseReplanConfig", () => {
  it("reads any input into a config within its bounds, or refuses it with invalid_params — never another error", () => {
    fc.assert(
      fc.property(fc.oneof(fc.dictionary(field, anyValue), anyValue), (input) => {
        let config: ReturnType<typeof parseReplanConfig>;
        try {
          config = parseReplanConfig(input);
        } catch (error) {
          expect(isCarError(error) && error.code === "invalid_params", String(error)).toBe(true);
          return;
        }
        expect(Number.isInteger(config.max_replans) && config.max_replans >= 0 && config.max_replans <= MAX_REPLANS).toBe(true);
        expect(Number.isInteger(config.delay_ms) && config.delay_ms >= 0 && config.delay_ms <= MAX_REPLAN_DELAY_MS).toBe(true);
        expect(config.verify_before_execute).toBe(true);
        // Nothing it was given is dropped: every field it accepted is one it keeps.
        for (const key of Object.keys(input as object)) expect(Object.hasOwn(config, key)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it("keeps what it was given and defaults the rest", () => {
    expect(parseReplanConfig({ max_replans: 2, delay_ms: 10, replan_on_rejected: true })).toEqual({
      max_replans: 2,
      delay_ms: 10,
      verify_before_execute: true,
      replan_on_rejected: true,
    });
    expect(parseReplanConfig({ max_replans: 0 })).toEqual({ max_replans: 0, delay_ms: 0, verify_before_execute: true, replan_on_rejected: false });
    expect(() => parseReplanConfig({ max_replans: 1, verify_before_execute: false })).toThrow(/verify_before_execute/);
  });
});
