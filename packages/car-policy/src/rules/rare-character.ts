/**
 * A cheap first test for "does `text` contain `needle`": search for the
 * needle's least common character alone. A one-character search is the
 * fastest a JavaScript engine does, a text lacking any character of the
 * needle cannot contain it, and most texts a policy rule inspects contain
 * none of its needles — so most full substring searches never run.
 */

/** Space and lowercase letters, most common first in prose and code; any other character counts as rarer than all of them. */
const COMMON = " etaoinsrhldcumfpgwybvkxjqz";

/**
 * The character of `needle` least likely to occur in ordinary text — or
 * `undefined` when that is its first character, which a substring search
 * already looks for first.
 */
export function rareCharacter(needle: string): string | undefined {
  let best: string | undefined;
  let bestScore = -1;
  for (const ch of needle) {
    const index = COMMON.indexOf(ch);
    const score = index < 0 ? COMMON.length : index;
    if (score > bestScore) {
      best = ch;
      bestScore = score;
    }
  }
  return best === undefined || needle.startsWith(best) ? undefined : best;
}

/** Exactly `text.includes(needle)`, given `rare = rareCharacter(needle)`. */
export function includesWith(text: string, needle: string, rare: string | undefined): boolean {
  return (rare === undefined || text.includes(rare)) && text.includes(needle);
}
