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

/**
 * The objects on the path from the root to the value being checked, to find
 * a cycle. A short path is searched as an array (no hash table churned by an
 * add and a delete per object); past `SHORT_PATH` deep a Set takes over, so
 * a hostile deeply nested value stays linear.
 */
class Ancestors {
  static readonly SHORT_PATH = 32;
  readonly #path: object[] = [];
  #deep: Set<object> | undefined;

  has(value: object): boolean {
    return this.#deep !== undefined ? this.#deep.has(value) : this.#path.includes(value);
  }

  push(value: object): void {
    this.#path.push(value);
    if (this.#deep !== undefined) this.#deep.add(value);
    else if (this.#path.length > Ancestors.SHORT_PATH) this.#deep = new Set(this.#path);
  }

  pop(): void {
    const value = this.#path.pop()!;
    this.#deep?.delete(value);
  }

  /** Empties it for the next walk (one that threw may have left a path behind). */
  clear(): void {
    this.#path.length = 0;
    this.#deep = undefined;
  }
}

/**
 * The one `Ancestors` reused by every walk that is not nested in another. Its
 * job beyond saving an allocation: V8 drops a class's hidden class once no
 * instance is alive, and a full GC between two parses then deoptimized
 * `walk` and its helpers every time (see @car/engine's `run/shape-keeper.ts`).
 */
let idleAncestors: Ancestors | undefined = new Ancestors();

/** Checks a value tree; the path is kept as tokens so pointers are only built for problems. */
function walk(value: unknown, path: (string | number)[], ancestors: Ancestors, out: ErrorProblem[]): void {
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
  ancestors.push(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      walk(value[i], path, ancestors, out);
      path.pop();
    }
  } else {
    const record = value as Record<string, unknown>;
    // for…in with an own-key test visits what Object.keys lists, in its order, without allocating the list.
    for (const key in record) {
      if (!Object.hasOwn(record, key)) continue;
      path.push(key);
      walk(record[key], path, ancestors, out);
      path.pop();
    }
  }
  ancestors.pop();
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
  // A getter on the input may parse again mid-walk: that nested walk gets its own.
  const ancestors = idleAncestors ?? new Ancestors();
  idleAncestors = undefined;
  try {
    walk(input, [], ancestors, problems);
  } finally {
    ancestors.clear();
    idleAncestors = ancestors;
  }
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
