/**
 * A retention policy (or an operator's cut of the log, DECISIONS §24) is
 * checked once, the same way by every backend: a bound that cannot be
 * enforced is refused, never ignored.
 */
import { CarError } from "@car/ir";
import type { RetentionPolicy } from "./durable-store.ts";

/** `policy` when it is one a backend can apply; `invalid_params` otherwise. */
export function validateRetention(policy: RetentionPolicy): RetentionPolicy {
  const positive = (n: number | undefined, name: string): void => {
    if (n !== undefined && (!Number.isSafeInteger(n) || n < 1)) throw new CarError("invalid_params", `retention ${name} must be a positive integer, got ${n}`);
  };
  if (!(policy.act === "clear" && policy.max_events === 0)) positive(policy.max_events, "max_events");
  positive(policy.max_age_ms, "max_age_ms");
  if (policy.max_events === undefined && policy.max_age_ms === undefined)
    throw new CarError("invalid_params", "a retention policy needs max_events or max_age_ms");
  if (policy.mode === "archive" && (policy.archive_path === undefined || policy.archive_path === ""))
    throw new CarError("invalid_params", "retention mode 'archive' needs archive_path");
  return policy;
}
