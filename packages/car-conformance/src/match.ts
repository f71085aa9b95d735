/**
 * Expectation matching. Scenarios state what they care about and nothing
 * more: an object pattern matches any object holding at least its keys, an
 * array pattern matches element by element, and a one-key object whose key
 * starts with `$` is an operator (below). Every mismatch is reported with
 * its path, so a failure reads as "expected X at results[1].status, got Y".
 */
import type { JsonValue } from "@car/ir";

export interface Mismatch {
  /** Where in the observed value, e.g. `results[1].status`. */
  path: string;
  expected: JsonValue;
  /** Absent when the observed value had nothing there. */
  actual?: JsonValue;
  message: string;
}

/** The operators a pattern may use; anything else starting with `$` is an ordinary key. */
export const OPERATORS = ["$any", "$absent", "$type", "$regex", "$oneOf", "$gte", "$lte", "$contains", "$length", "$exact", "$not", "$includes"] as const;

type Operator = (typeof OPERATORS)[number];

function operatorOf(pattern: JsonValue): Operator | undefined {
  if (pattern === null || typeof pattern !== "object" || Array.isArray(pattern)) return undefined;
  const keys = Object.keys(pattern);
  if (keys.length !== 1) return undefined;
  return (OPERATORS as readonly string[]).includes(keys[0]!) ? (keys[0] as Operator) : undefined;
}

function typeName(value: JsonValue | undefined): string {
  if (value === undefined) return "absent";
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function join(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? (path === "" ? key : `${path}.${key}`) : `${path}[${JSON.stringify(key)}]`;
}

/** Whether `actual` satisfies `pattern`; every mismatch found is appended to `out`. */
export function match(pattern: JsonValue, actual: JsonValue | undefined, path = "", out: Mismatch[] = []): Mismatch[] {
  const fail = (message: string): Mismatch[] => {
    const m: Mismatch = { path: path === "" ? "(root)" : path, expected: pattern, message };
    if (actual !== undefined) m.actual = actual;
    out.push(m);
    return out;
  };
  const op = operatorOf(pattern);
  if (op !== undefined) {
    const arg = (pattern as Record<string, JsonValue>)[op]!;
    switch (op) {
      case "$any":
        return actual === undefined ? fail("expected a value, found none") : out;
      case "$absent":
        return actual === undefined ? out : fail("expected no value");
      case "$type":
        return typeName(actual) === arg ? out : fail(`expected a ${String(arg)}, found ${typeName(actual)}`);
      case "$regex":
        return typeof actual === "string" && new RegExp(String(arg)).test(actual) ? out : fail(`expected a string matching /${String(arg)}/`);
      case "$includes":
        return typeof actual === "string" && actual.includes(String(arg)) ? out : fail(`expected a string containing ${JSON.stringify(arg)}`);
      case "$oneOf": {
        const options = Array.isArray(arg) ? arg : [arg];
        return options.some((o) => match(o, actual).length === 0) ? out : fail(`expected one of ${JSON.stringify(options)}`);
      }
      case "$gte":
        return typeof actual === "number" && actual >= Number(arg) ? out : fail(`expected a number >= ${String(arg)}`);
      case "$lte":
        return typeof actual === "number" && actual <= Number(arg) ? out : fail(`expected a number <= ${String(arg)}`);
      case "$length":
        return Array.isArray(actual) && actual.length === arg ? out : fail(`expected an array of length ${String(arg)}`);
      case "$not":
        return actual !== undefined && match(arg, actual).length > 0 ? out : fail(`expected a value not matching ${JSON.stringify(arg)}`);
      case "$contains": {
        if (!Array.isArray(actual)) return fail("expected an array");
        const wanted = Array.isArray(arg) ? arg : [arg];
        for (const w of wanted) {
          if (!actual.some((a) => match(w, a).length === 0)) {
            out.push({ path: path === "" ? "(root)" : path, expected: w, actual, message: `no element matches ${JSON.stringify(w)}` });
          }
        }
        return out;
      }
      case "$exact": {
        if (arg === null || typeof arg !== "object" || Array.isArray(arg)) return match(arg, actual, path, out);
        if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return fail("expected an object");
        for (const key of Object.keys(actual)) {
          if (!Object.hasOwn(arg, key)) out.push({ path: join(path, key), expected: { $absent: true }, actual: actual[key]!, message: "unexpected key" });
        }
        return matchObject(arg, actual, path, out);
      }
    }
  }
  if (Array.isArray(pattern)) {
    if (!Array.isArray(actual)) return fail(`expected an array, found ${typeName(actual)}`);
    if (actual.length !== pattern.length) return fail(`expected ${pattern.length} elements, found ${actual.length}`);
    pattern.forEach((p, i) => match(p, actual[i], join(path, i), out));
    return out;
  }
  if (pattern !== null && typeof pattern === "object") {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return fail(`expected an object, found ${typeName(actual)}`);
    return matchObject(pattern, actual, path, out);
  }
  return actual === pattern ? out : fail(actual === undefined ? "expected a value, found none" : "values differ");
}

function matchObject(pattern: Record<string, JsonValue>, actual: Record<string, JsonValue>, path: string, out: Mismatch[]): Mismatch[] {
  for (const key of Object.keys(pattern)) {
    match(pattern[key]!, Object.hasOwn(actual, key) ? actual[key] : undefined, join(path, key), out);
  }
  return out;
}

/** True when `actual` satisfies `pattern`. */
export function matches(pattern: JsonValue, actual: JsonValue | undefined): boolean {
  return match(pattern, actual).length === 0;
}
