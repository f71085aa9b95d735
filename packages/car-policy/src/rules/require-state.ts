/** `require_state`: deny every action until a state key holds one exact JSON value (ordering gates, feature flags). */
import { jsonEquals, type JsonValue } from "@car/ir";
import type { PolicyRule } from "../engine.ts";

export function requireStateRule(name: string, key: string, value: JsonValue): PolicyRule {
  const reason = `state key '${key}' does not hold the required value`;
  return {
    name,
    evaluate: (_action, state) => (jsonEquals(state.get(key), value) ? undefined : reason),
  };
}
