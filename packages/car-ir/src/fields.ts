/**
 * The known wire fields of each shape, in the order serialisation writes
 * them. Any other field is "unknown": kept on parse and re-emitted after the
 * known ones, so a proposal from a newer writer round-trips (forward
 * compatibility: "field additions are non-breaking").
 */
import { cloneJson, hasKey, setOwn } from "./json.ts";
import type { JsonValue } from "./types.ts";

export const PROPOSAL_FIELDS = ["id", "source", "timestamp", "actions", "context"] as const;

export const ACTION_FIELDS = [
  "id",
  "type",
  "tool",
  "parameters",
  "preconditions",
  "expected_effects",
  "dependencies",
  "state_dependencies",
  "read_set",
  "write_set",
  "assumptions",
  "invocation_mode",
  "reversibility",
  "compensation",
  "idempotent",
  "max_retries",
  "failure_behavior",
  "timeout_ms",
  "metadata",
] as const;

export const PRECONDITION_FIELDS = ["key", "operator", "value", "description"] as const;
export const ASSUMPTION_FIELDS = ["key", "expected_value", "read_version"] as const;
export const TOOL_COMPENSATION_FIELDS = ["type", "tool", "parameters"] as const;
export const REF_COMPENSATION_FIELDS = ["type", "action_id"] as const;
export const ACTION_RESULT_FIELDS = [
  "action_id",
  "status",
  "output",
  "error",
  "state_changes",
  "duration_ms",
  "timestamp",
  "terminal",
  "rolled_back",
  "compensated",
  "compensation_error",
] as const;
export const PROPOSAL_RESULT_FIELDS = ["proposal_id", "results", "cost"] as const;
export const COST_SUMMARY_FIELDS = ["tool_calls", "actions_executed", "actions_rejected", "actions_skipped", "total_duration_ms", "retries"] as const;
export const TOOL_SCHEMA_FIELDS = ["name", "source", "description", "parameters", "returns", "idempotent", "cache_ttl_secs", "rate_limit"] as const;

const setCache = new WeakMap<readonly string[], ReadonlySet<string>>();

function asSet(fields: readonly string[]): ReadonlySet<string> {
  let set = setCache.get(fields);
  if (set === undefined) {
    set = new Set(fields);
    setCache.set(fields, set);
  }
  return set;
}

/**
 * Copies the fields of `from` that are not in `known` onto `to` (deep
 * copies by default, own properties — a `__proto__` field stays a field).
 */
export function copyUnknownFields(from: object, to: object, known: readonly string[], copy: (value: JsonValue) => JsonValue = cloneJson): void {
  const knownSet = asSet(known);
  const source = from as Record<string, JsonValue>;
  for (const key in source) {
    if (!hasKey(source, key) || knownSet.has(key)) continue;
    const value = source[key];
    if (value === undefined) continue;
    setOwn(to as Record<string, JsonValue>, key, copy(value));
  }
}
