/**
 * `deny_keyword`: the coarse guard — a substring that may appear in no
 * string-coerced parameter of any action. The keyword is already public in
 * the rule's name; the reason still names only the parameter it was found in.
 */
import type { PolicyRule } from "../engine.ts";

export function denyKeywordRule(keyword: string): PolicyRule {
  return {
    name: `deny_keyword:${keyword}`,
    evaluate(_action, _state, context) {
      if (!context.joinedParamStrings().includes(keyword)) return undefined;
      for (const [key, text] of context.paramStrings()) {
        if (text.includes(keyword)) return `parameter '${key}' contains a denied keyword`;
      }
      return undefined;
    },
  };
}
