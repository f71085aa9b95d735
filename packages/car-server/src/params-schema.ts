/**
 * Checks a call's params against its method's declared schema
 * (`@car/client/protocol`) before the handler runs. A failure is the same
 * `invalid_params` (-32602) the handlers' own readers raise (params.ts),
 * worded the same way and naming the field, so a client learns what was
 * wrong without the handler seeing the malformed call.
 */
import { type MethodDeclaration, PROTOCOL } from "@car/client/protocol";
import { compileSchema, getOwn, type JsonObject, type JsonValue, type SchemaError, type SchemaValidator } from "@car/ir";
import { invalidParams } from "./params.ts";

/** Each declared method's validator, compiled on its first call and kept (one per method). */
const validators = new Map<string, SchemaValidator>();

/** The declaration of `method`, if the protocol has one. */
export function declarationOf(method: string): MethodDeclaration | undefined {
  return getOwn(PROTOCOL as unknown as JsonObject, method) as MethodDeclaration | undefined;
}

/** Throws `invalid_params` naming the first field of `params` that does not match `method`'s declaration; absent or null params read as `{}`. */
export function checkParams(method: string, params: JsonValue | undefined): void {
  const declaration = declarationOf(method);
  if (declaration === undefined) return;
  let validate = validators.get(method);
  if (validate === undefined) {
    validate = compileSchema(declaration.params as JsonObject);
    validators.set(method, validate);
  }
  const value = params === undefined || params === null ? {} : params;
  const outcome = validate(value);
  if (outcome.ok) return;
  throw invalidParams(describe(pickError(outcome.errors), value, declaration.params as JsonObject));
}

/** The error that says the most: the deepest field, ahead of an umbrella `anyOf` at the top. */
function pickError(errors: SchemaError[]): SchemaError {
  let best = errors[0]!;
  for (const e of errors) if (depth(e.path) > depth(best.path)) best = e;
  return best;
}

function depth(pointer: string): number {
  return pointer === "" ? 0 : pointer.split("/").length - 1;
}

function tokens(pointer: string): string[] {
  return pointer === ""
    ? []
    : pointer
        .slice(1)
        .split("/")
        .map((t) => t.replaceAll("~1", "/").replaceAll("~0", "~"));
}

/** `/agents/0/name` → `agents[0].name`. */
function fieldName(pointer: string): string {
  let out = "";
  for (const t of tokens(pointer)) out += /^\d+$/.test(t) ? `[${t}]` : out === "" ? t : `.${t}`;
  return out;
}

function at(value: unknown, pointer: string): unknown {
  let v = value;
  for (const t of tokens(pointer)) v = v !== null && typeof v === "object" ? (v as Record<string, unknown>)[t] : undefined;
  return v;
}

const ARTICLE: Record<string, string> = {
  string: "a string",
  number: "a number",
  integer: "an integer",
  boolean: "a boolean",
  object: "an object",
  array: "an array",
};

/** One error in the readers' words: "key is required", "key must be a string", "rollback must be one of …". */
function describe(error: SchemaError, value: unknown, schema: JsonObject): string {
  const keyword = error.schemaPath.slice(error.schemaPath.lastIndexOf("/") + 1);
  const field = fieldName(error.path);
  if (field === "") return "expected an object";
  const found = at(value, error.path);
  if (keyword === "required" || found === null) return `${field} is required`;
  if (keyword === "type") {
    const types = (at(schema, error.schemaPath.slice(1)) as string | string[] | undefined) ?? [];
    const named = (Array.isArray(types) ? types : [types]).filter((t) => t !== "null").map((t) => ARTICLE[t] ?? t);
    return `${field} must be ${named.join(" or ")}`;
  }
  if (keyword === "enum" || keyword === "const") {
    const allowed = at(schema, error.schemaPath.slice(1));
    const list = (Array.isArray(allowed) ? allowed : [allowed]).filter((v) => v !== null).map((v) => JSON.stringify(v));
    return `${field} must be ${list.join(" or ")}`;
  }
  return `${field} ${error.message}`;
}
