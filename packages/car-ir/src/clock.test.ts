import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { randomIds, rfc3339, sequentialIds, shortId } from "./clock.ts";

describe("rfc3339", () => {
  it("writes what Date writes for any time, asked in any order and again", () => {
    // Up to ±100M days: every time Date can hold, with repeats so the remembered last stamp is read back.
    const time = fc.integer({ min: -8.64e15, max: 8.64e15 });
    fc.assert(
      fc.property(fc.array(fc.oneof(time, fc.constantFrom(0, 1, 1_700_000_000_000)), { minLength: 1, maxLength: 20 }), (times) => {
        for (const ms of times) {
          expect(rfc3339(ms)).toBe(new Date(ms).toISOString());
          expect(rfc3339(ms)).toBe(new Date(ms).toISOString());
        }
      }),
    );
  });

  it("writes a Date handed in from JavaScript afresh each time, even after it changed", () => {
    const when = new Date(1_000);
    expect(rfc3339(when as unknown as number)).toBe("1970-01-01T00:00:01.000Z");
    when.setTime(2_000);
    expect(rfc3339(when as unknown as number)).toBe("1970-01-01T00:00:02.000Z");
  });

  it("refuses a time Date cannot hold, and the next stamp is still right", () => {
    rfc3339(5);
    expect(() => rfc3339(8.64e15 + 1)).toThrow(RangeError);
    expect(() => rfc3339(Number.NaN)).toThrow(RangeError);
    expect(rfc3339(5)).toBe("1970-01-01T00:00:00.005Z");
    expect(rfc3339(6)).toBe("1970-01-01T00:00:00.006Z");
  });
});

describe("shortId", () => {
  it("takes 12 lowercase hex digits from a random UUID, fresh each time", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const id = shortId();
      expect(id).toMatch(/^[0-9a-f]{12}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(1000);
    expect(shortId(randomIds)).toMatch(/^[0-9a-f]{12}$/);
  });

  it("reads any other generator's id without its dashes, cut to 12", () => {
    const fixed = { next: () => "0123abcd-4567-89ef-0123-456789abcdef" };
    expect(shortId(fixed)).toBe("0123abcd4567");
    // A generator that wraps the random one is still asked.
    expect(shortId({ next: () => `x-${randomIds.next()}` })).toMatch(/^x[0-9a-f]{11}$/);
    const ids = sequentialIds("p-");
    expect(shortId(ids)).toBe("p1");
    expect(shortId(ids)).toBe("p2");
  });
});
