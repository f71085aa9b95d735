/**
 * The frame depth check: `nestsDeeperThan` agrees with a plain recursive
 * depth, and the length shortcut (`couldNestDeeperThan`) never lets a frame
 * that is too deep skip the walk.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { couldNestDeeperThan, nestsDeeperThan } from "./jsonrpc.ts";

function depthOf(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + children.reduce<number>((max, child) => Math.max(max, depthOf(child)), 0);
}

function nested(levels: number, leaf: unknown, asArray: (level: number) => boolean): unknown {
  let v = leaf;
  for (let i = 0; i < levels; i++) v = asArray(i) ? [v] : { k: v };
  return v;
}

describe("frame depth", () => {
  it("nestsDeeperThan(v, max) is depth(v) > max, and a frame that deep is never too short to walk", () => {
    const value = fc.oneof(
      fc.jsonValue({ maxDepth: 8 }),
      fc
        .tuple(fc.integer({ min: 0, max: 40 }), fc.jsonValue({ maxDepth: 2 }), fc.boolean())
        .map(([n, leaf, arr]) => nested(n, leaf, (i) => arr === (i % 2 === 0))),
    );
    fc.assert(
      fc.property(value, fc.integer({ min: 0, max: 20 }), (v, max) => {
        // `max` levels of containers are allowed; one more is too deep.
        const deeper = depthOf(v) > max;
        expect(nestsDeeperThan(v, max)).toBe(deeper);
        if (deeper) expect(couldNestDeeperThan(JSON.stringify(v), max)).toBe(true);
      }),
    );
  });

  it("the shortest frame past the limit is still walked; the longest one within it may skip the walk", () => {
    const tooDeep = `${"[".repeat(257)}${"]".repeat(257)}`;
    expect(couldNestDeeperThan(tooDeep, 256)).toBe(true);
    expect(nestsDeeperThan(JSON.parse(tooDeep), 256)).toBe(true);
    const atTheLimit = `${"[".repeat(256)}${"]".repeat(256)}`;
    expect(couldNestDeeperThan(atTheLimit, 256)).toBe(false);
    expect(nestsDeeperThan(JSON.parse(atTheLimit), 256)).toBe(false);
  });
});
