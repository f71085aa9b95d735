import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { includesWith, rareCharacter } from "./rare-character.ts";

describe("rareCharacter", () => {
  it("picks a character outside the common set, and none when the first already is the rarest", () => {
    expect(rareCharacter("rm -rf /")).toBe("-");
    expect(rareCharacter("chmod 777")).toBe("7");
    expect(rareCharacter("DROP TABLE")).toBeUndefined();
    expect(rareCharacter("mkfs")).toBe("k");
    expect(rareCharacter("")).toBeUndefined();
  });

  it("keeps includesWith exactly equal to includes (any strings, astral characters too)", () => {
    const piece = fc.constantFrom("a", "e", "k", "-", " ", "7", "\u{1F600}", "\ud83d", "\u017f", "x");
    const str = fc.array(piece, { maxLength: 10 }).map((p) => p.join(""));
    fc.assert(
      fc.property(str, str, fc.boolean(), (text, needle, embed) => {
        const haystack = embed ? `${text}${needle}${text}` : text;
        expect(includesWith(haystack, needle, rareCharacter(needle))).toBe(haystack.includes(needle));
      }),
      { numRuns: 2000 },
    );
  });
});
