/**
 * The front door of every parse function: text is parsed as JSON, a value is
 * checked to BE JSON (no `undefined`, functions, class instances, cycles,
 * non-finite numbers), and any failure becomes a `CarError` with pointers.
 */
import { CarError, type CarErrorCode, type ErrorProblem } from "./errors.ts";
import { pointerOf } from "./validate.ts";

const MAX_LISTED = 100;

/** A `CarError` listing every problem; the message names the first few. */
export function problemsError(code: CarErrorCode, what: string, problems: ErrorProblem[]): CarError {
  const shown = problems.slice(0, 3).map((p) => `${p.pointer === "" ? "(root)" : p.pointer}: ${p.message}`);
  const more = problems.length > 3 ? ` (and ${problems.length - 3} more)` : "";
  return new CarError(code, `invalid ${what}: ${shown.join("; ")}${more}`, { problems });
}

function describeNonJson(value: unknown): string | undefined {
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(value) ? undefined : `${value} is not a JSON number`;
    case "object": {
      if (value === null || Array.isArray(value)) return undefined;
      const proto = Object.getPrototypeOf(value) as unknown;
      return proto === Object.prototype || proto === null ? undefined : "not plain JSON data (an object with a custom prototype)";
    }
    default:
      return `not a JSON value (${typeof value})`;
  }
}

/** Checks a value tree; the path is kept as tokens so pointers are only built for problems. */
function walk(value: unknown, path: (string | number)[], ancestors: Set<object>, out: ErrorProblem[]): void {
  if (out.length >= MAX_LISTED) return;
  const problem = describeNonJson(value);
  if (problem !== undefined) {
    out.push({ pointer: pointerOf(path), message: problem });
    return;
  }
  if (typeof value !== "object" || value === null) return;
  if (ancestors.has(value)) {
    out.push({ pointer: pointerOf(path), message: "circular reference" });
    return;
  }
  ancestors.add(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      walk(value[i], path, ancestors, out);
      path.pop();
    }
  } else {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      path.push(key);
      walk(record[key], path, ancestors, out);
      path.pop();
    }
  }
  ancestors.delete(value);
}

/**
 * `input` as JSON data: a string is parsed as JSON text; anything else must
 * already be JSON data. Throws `code` with pointers otherwise.
 */
export function readJsonInput(input: unknown, code: CarErrorCode, what: string): unknown {
  if (typeof input === "string") {
    try {
      return JSON.parse(input) as unknown;
    } catch (error) {
      throw problemsError(code, what, [{ pointer: "", message: `not valid JSON: ${(error as Error).message}` }]);
    }
  }
  const problems: ErrorProblem[] = [];
  walk(input, [], new Set(), problems);
  if (problems.length > 0) throw problemsError(code, what, problems);
  return input;
}

/**
 * Runs a parse step so that nothing but a `CarError` escapes: a value deep
 * enough to exhaust the stack, for instance, becomes `code` too.
 */
export function guarded<T>(code: CarErrorCode, what: string, step: () => T): T {
  try {
    return step();
  } catch (error) {
    if (error instanceof CarError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new CarError(code, `invalid ${what}: ${message}`, { problems: [{ pointer: "", message }] }, { cause: error });
  }
}

/**
 * `input` as a JSON object (a state map, an options record) or a `CarError`
 * with `code`: not text, but data that must already be a plain object of
 * JSON, with no cycles and not nested past the stack.
 */
export function readJsonObject(input: unknown, what: string, code: CarErrorCode = "invalid_params"): Record<string, unknown> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw problemsError(code, what, [
      { pointer: "", message: `must be a JSON object, got ${input === null ? "null" : Array.isArray(input) ? "an array" : typeof input}` },
    ]);
  }
  return guarded(code, what, () => readJsonInput(input, code, what) as Record<string, unknown>);
}
