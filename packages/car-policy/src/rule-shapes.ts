/**
 * What the engine may know about a rule this package built, so a check can
 * run it in bulk instead of through `evaluate`: that it is a `deny_keyword`
 * on one keyword, or that it judges the call as sent and then (`onNormal`)
 * its normalised form. Kept beside the rule, by identity, not on it: a rule
 * is a plain object a user may copy or write, and a copy is simply run by
 * its `evaluate`, which always does the whole job.
 */
import type { PolicyRule } from "./engine.ts";

/** A rule that judges the call as sent with `asSent`, and the normalised call (if that passed) with `onNormal`. */
export interface SplitRule {
  readonly asSent: PolicyRule;
  readonly onNormal: readonly PolicyRule[];
}

const KEYWORDS = new WeakMap<PolicyRule, string>();
const SPLITS = new WeakMap<PolicyRule, SplitRule>();

/** Records that `rule` denies exactly the calls with `keyword` in some parameter's string form (`denyKeywordRule`). */
export function markKeywordRule<R extends PolicyRule>(keyword: string, rule: R): R {
  KEYWORDS.set(rule, keyword);
  return rule;
}

/** The keyword of a rule built by `denyKeywordRule`; `undefined` for any other rule. */
export function keywordOf(rule: PolicyRule): string | undefined {
  return KEYWORDS.get(rule);
}

/** Records that `rule.evaluate` is `split.asSent`, then `split.onNormal` on the normalised call when that passed. */
export function markSplitRule<R extends PolicyRule>(rule: R, split: SplitRule): R {
  SPLITS.set(rule, split);
  return rule;
}

export function splitOf(rule: PolicyRule): SplitRule | undefined {
  return SPLITS.get(rule);
}
