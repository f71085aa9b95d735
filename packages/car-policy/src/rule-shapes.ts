/**
 * What the engine may know about a rule this package built, so a check can
 * run it in bulk instead of through `evaluate`: that it is a substring test
 * (`ScanShape`, run by `ParameterScan`), or that it judges the call as sent
 * and then (`onNormal`) its normalised form. Kept beside the rule, by identity, not on it: a rule
 * is a plain object a user may copy or write, and a copy is simply run by
 * its `evaluate`, which always does the whole job.
 */
import type { PolicyRule } from "./engine.ts";

/** A rule that judges the call as sent with `asSent`, and the normalised call (if that passed) with `onNormal`. */
export interface SplitRule {
  readonly asSent: PolicyRule;
  readonly onNormal: readonly PolicyRule[];
}

/** What a rule's `evaluate` does, exactly, when it is one of these. */
export type ScanShape =
  /** Denies with `keywordReason(key)` for the first parameter whose string form contains `needle`. */
  | { readonly kind: "keyword"; readonly param?: undefined; readonly needle: string }
  /** Denies with `reason` when parameter `param`'s string form contains `needle`. */
  | { readonly kind: "contains"; readonly param: string; readonly needle: string; readonly reason: string }
  /**
   * Reads only parameter `param`, and can deny only when its string form
   * contains each of `needs` (lowercased first when `foldCase`; a text
   * beyond ASCII is always evaluated).
   */
  | { readonly kind: "screened"; readonly param: string; readonly needs: readonly string[]; readonly foldCase: boolean };

const SHAPES = new WeakMap<PolicyRule, ScanShape>();
const SPLITS = new WeakMap<PolicyRule, SplitRule>();

/** Records what `rule` does, for `ParameterScan`. */
export function markScanRule<R extends PolicyRule>(shape: ScanShape, rule: R): R {
  SHAPES.set(rule, shape);
  return rule;
}

/** The shape of a rule `markScanRule` recorded; `undefined` for any other rule. */
export function scanShapeOf(rule: PolicyRule): ScanShape | undefined {
  return SHAPES.get(rule);
}

/** Records that `rule.evaluate` is `split.asSent`, then `split.onNormal` on the normalised call when that passed. */
export function markSplitRule<R extends PolicyRule>(rule: R, split: SplitRule): R {
  SPLITS.set(rule, split);
  return rule;
}

export function splitOf(rule: PolicyRule): SplitRule | undefined {
  return SPLITS.get(rule);
}
