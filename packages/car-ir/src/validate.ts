/**
 * Structural validation of wire shapes against the shipped JSON Schemas,
 * through ajv's pre-compiled standalone validators (no compiler at runtime).
 * Every problem is reported with a JSON pointer, not just the first one.
 */
import type { ErrorProblem } from "./errors.ts";
import type { SchemaName } from "./schemas.ts";
import * as validators from "./generated/validators.ts";

interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

type StandaloneValidator = ((data: unknown) => boolean) & { errors?: AjvError[] | null };

const table = validators as unknown as Record<SchemaName, StandaloneValidator>;

/** RFC 6901 escaping of one reference token. */
export function pointerToken(token: string | number): string {
  return String(token).replace(/~/g, "~0").replace(/\//g, "~1");
}

/** The JSON pointer of a path of tokens (`""` for the root). */
export function pointerOf(path: readonly (string | number)[]): string {
  return path.map((t) => `/${pointerToken(t)}`).join("");
}

function toProblem(error: AjvError, base: string): ErrorProblem {
  let pointer = base + error.instancePath;
  let message = error.message ?? error.keyword;
  if (error.keyword === "required") {
    const missing = String(error.params["missingProperty"]);
    pointer += `/${pointerToken(missing)}`;
    message = `required field '${missing}' is missing`;
  } else if (error.keyword === "type") {
    message = `must be ${String(error.params["type"]).split(",").join(" or ")}`;
  } else if (error.keyword === "enum") {
    message = `must be one of ${(error.params["allowedValues"] as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
  }
  return { pointer, message };
}

/**
 * The problems `value` has against schema `name`; empty when it is valid.
 * `base` prefixes every pointer (e.g. `/actions/3` when validating one action).
 */
export function shapeProblems(name: SchemaName, value: unknown, base = ""): ErrorProblem[] {
  const validate = table[name];
  if (validate(value)) return [];
  const problems: ErrorProblem[] = [];
  const seen = new Set<string>();
  // `anyOf` branches (e.g. "null or a compensation") each report their own
  // type error at one pointer; they are merged into one "must be a or b".
  const typeProblems = new Map<string, { problem: ErrorProblem; types: string[] }>();
  for (const error of validate.errors ?? []) {
    // `if`/`anyOf` failures only restate the specific errors reported beside them.
    if (error.keyword === "if" || error.keyword === "anyOf") continue;
    const problem = toProblem(error, base);
    if (error.keyword === "type") {
      const merged = typeProblems.get(problem.pointer);
      const type = String(error.params["type"]).split(",").join(" or ");
      if (merged !== undefined) {
        merged.types.push(type);
        merged.problem.message = `must be ${merged.types.join(" or ")}`;
        continue;
      }
      typeProblems.set(problem.pointer, { problem, types: [type] });
    }
    const id = `${problem.pointer}\u0000${problem.message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    problems.push(problem);
  }
  return problems;
}
