/**
 * `deny_keyword`: the coarse guard — a substring that may appear in no
 * string-coerced parameter of any action. The keyword is already public in
 * the rule's name; the reason still names only the parameter it was found in.
 *
 * Every action meets every keyword and almost none contains one, so the
 * rule first searches all parameters at once (joined), starting from the
 * keyword's rarest character, and looks parameter by parameter only on a hit.
 */
import type { PolicyRule } from "../engine.ts";
import { markScanRule } from "../rule-shapes.ts";
import { includesWith, rareCharacter } from "./rare-character.ts";

export function denyKeywordRule(keyword: string): PolicyRule {
  const rare = rareCharacter(keyword);
  return markScanRule(
    { kind: "keyword", needle: keyword },
    {
      name: `deny_keyword:${keyword}`,
      evaluate(_action, _state, context) {
        if (!includesWith(context.joinedParamStrings(), keyword, rare)) return undefined;
        for (const [key, text] of context.paramStrings()) {
          if (text.includes(keyword)) return keywordReason(key);
        }
        return undefined;
      },
    },
  );
}

/** Why a keyword rule denies: the parameter, never the keyword's surroundings. */
export function keywordReason(key: string): string {
  return `parameter '${key}' contains a denied keyword`;
}
