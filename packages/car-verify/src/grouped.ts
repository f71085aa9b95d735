/**
 * Findings of one kind on one key are reported one by one only while they
 * are few. Beyond `GROUP_SAMPLE` they become a single issue with the count
 * and a bounded sample, so a proposal with 100k writers of ten keys gets ten
 * readable findings, not 100k. (The full list of conflicting pairs stays in
 * the result's `conflicts`.)
 */

/** The most findings of one kind on one key reported individually, and the sample size of a group. */
export const GROUP_SAMPLE = 5;

/** `'a', 'b', 'c' and 7 more`: at most `GROUP_SAMPLE` names, then the count of the rest. */
export function sampleList(names: readonly string[], total = names.length, limit = GROUP_SAMPLE): string {
  const shown = names.slice(0, limit);
  return total > shown.length ? `${shown.join(", ")} and ${total - shown.length} more` : shown.join(", ");
}
