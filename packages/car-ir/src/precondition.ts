/**
 * Precondition evaluation with exactly the spec's operator table. An unknown
 * or mis-cased operator is a failed check, never an exception, so older
 * runtimes degrade safely when new operators appear.
 */
import type { JsonValue, Precondition } from "./types.ts";
import { getOwn, hasKey, jsonEquals } from "./json.ts";

/** Where preconditions read state: a plain map or a `Map`. */
export type StateLookup = Readonly<Record<string, JsonValue>> | ReadonlyMap<string, JsonValue>;

export type PreconditionOutcome = { ok: true } | { ok: false; message: string };

const OK: PreconditionOutcome = { ok: true };

function lookup(state: StateLookup, key: string): { present: boolean; value: JsonValue | undefined } {
  if (state instanceof Map) {
    // One hash lookup for a present key (state never holds `undefined`); `has` only on a miss.
    const value = state.get(key);
    return { present: value !== undefined || state.has(key), value };
  }
  const record = state as Record<string, JsonValue>;
  return { present: hasKey(record, key), value: getOwn(record, key) };
}

function holds(operator: string, present: boolean, actual: JsonValue | undefined, expected: JsonValue): boolean {
  switch (operator) {
    case "eq":
      return present && jsonEquals(actual, expected);
    case "neq":
      return !(present && jsonEquals(actual, expected));
    case "gt":
    case "lt":
    case "gte":
    case "lte": {
      if (typeof actual !== "number" || typeof expected !== "number") return false;
      if (operator === "gt") return actual > expected;
      if (operator === "lt") return actual < expected;
      if (operator === "gte") return actual >= expected;
      return actual <= expected;
    }
    case "exists":
      return present;
    case "not_exists":
      return !present;
    case "contains":
      if (typeof actual === "string") return typeof expected === "string" && actual.includes(expected);
      if (Array.isArray(actual)) return actual.some((item) => jsonEquals(item, expected));
      return false;
    default:
      return false;
  }
}

function describe(pre: Precondition, present: boolean, actual: JsonValue | undefined): string {
  const expectation = pre.operator === "exists" || pre.operator === "not_exists" ? "" : ` ${JSON.stringify(pre.value)}`;
  const found = present ? JSON.stringify(actual) : "absent";
  const note = pre.description ? ` (${pre.description})` : "";
  return `precondition failed: '${pre.key}' ${pre.operator}${expectation}; found ${found}${originalPhrase(pre, present)}${note}`;
}

/**
 * The original's wording for the same failure, kept beside ours so logs and
 * alerts written against the original still match.
 */
function originalPhrase(pre: Precondition, present: boolean): string {
  if (pre.operator === "exists") return `: key '${pre.key}' does not exist`;
  if (pre.operator === "not_exists") return `: key '${pre.key}' exists but should not`;
  if (pre.operator === "contains" && !present) return `: cannot check contains, key '${pre.key}' does not exist`;
  return "";
}

/** What a failed precondition found: whether its key was present, and the value it had. */
export interface PreconditionMiss {
  readonly present: boolean;
  readonly value: JsonValue | undefined;
}

/**
 * `undefined` when `pre` holds, else what it found, with no message built:
 * verify's walk can meet 100k failures and reports only a sample of them
 * (`preconditionFailureMessage` words one when it is needed).
 */
export function checkPrecondition(pre: Precondition, state: StateLookup): PreconditionMiss | undefined {
  const found = lookup(state, pre.key);
  return holds(pre.operator, found.present, found.value, pre.value) ? undefined : found;
}

/** The message `evaluatePrecondition` gives for a failure of `pre` that found `miss`. */
export function preconditionFailureMessage(pre: Precondition, miss: PreconditionMiss): string {
  if (!KNOWN_OPERATORS.has(pre.operator)) return `precondition failed: unknown operator '${pre.operator}' on '${pre.key}'`;
  return describe(pre, miss.present, miss.value);
}

/** Evaluates one precondition; a failure names the key, the operator and the expectation. */
export function evaluatePrecondition(pre: Precondition, state: StateLookup): PreconditionOutcome {
  const miss = checkPrecondition(pre, state);
  return miss === undefined ? OK : { ok: false, message: preconditionFailureMessage(pre, miss) };
}

/** Every precondition of an action, stopping at the first that fails. */
export function evaluatePreconditions(pres: readonly Precondition[], state: StateLookup): PreconditionOutcome {
  for (const pre of pres) {
    const outcome = evaluatePrecondition(pre, state);
    if (!outcome.ok) return outcome;
  }
  return OK;
}

export const KNOWN_OPERATORS: ReadonlySet<string> = new Set(["eq", "neq", "gt", "lt", "gte", "lte", "exists", "not_exists", "contains"]);
