/**
 * Compiles user-supplied JSON Schemas (a ToolSchema's `parameters` and
 * `returns`). This is the only place ajv's compiler runs, and it is loaded
 * lazily on the first call: importing ajv costs tens of milliseconds, which
 * a process that never validates a tool call (the policy hook) should not pay.
 */
import { createRequire } from "node:module";
import type { Ajv as AjvClass, ErrorObject, ValidateFunction } from "ajv";
import { canonicalJson } from "./canonical.ts";
import { CarError } from "./errors.ts";
import { getOwn } from "./json.ts";
import type { JsonObject } from "./types.ts";
import { pointerToken } from "./validate.ts";

export interface SchemaError {
  /** JSON pointer into the validated value. */
  path: string;
  /** JSON pointer into the schema, e.g. `#/properties/env/enum`. */
  schemaPath: string;
  message: string;
}

export type SchemaValidation = { ok: true } | { ok: false; errors: SchemaError[] };
export type SchemaValidator = (value: unknown) => SchemaValidation;

const VALID: SchemaValidation = { ok: true };
const cache = new Map<string, SchemaValidator>();
let ajv: AjvClass | undefined;

function compiler(): AjvClass {
  if (ajv === undefined) {
    const { Ajv } = createRequire(import.meta.url)("ajv") as typeof import("ajv");
    // Tool authors write schemas for many drafts' worth of keywords; unknown
    // keywords and formats are ignored rather than refused.
    ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
  }
  return ajv;
}

function toSchemaError(error: ErrorObject): SchemaError {
  let path = error.instancePath;
  if (error.keyword === "required") path += `/${pointerToken(String(error.params["missingProperty"]))}`;
  return { path, schemaPath: error.schemaPath, message: error.message ?? error.keyword };
}

/**
 * A validator for `schema`, compiled once and cached by the schema's
 * canonical JSON. A schema that does not compile is `invalid_schema`.
 */
export function compileSchema(schema: JsonObject): SchemaValidator {
  const key = canonicalJson(schema);
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  let validate: ValidateFunction;
  try {
    const ajv = compiler();
    // Two tools may ship different schemas under one `$id`; the cache above
    // already dedupes identical ones, so the registry entry can be replaced.
    const id = getOwn(schema, "$id");
    if (typeof id === "string") ajv.removeSchema(id);
    // `$schema` names a draft; ajv's default class knows only draft-07 and
    // would refuse the others outright, while their common keywords agree.
    const { $schema: _draft, ...rest } = schema;
    validate = ajv.compile(rest);
  } catch (error) {
    throw new CarError("invalid_schema", `JSON Schema does not compile: ${(error as Error).message}`, { schema }, { cause: error });
  }
  const validator: SchemaValidator = (value) => {
    if (validate(value)) return VALID;
    return { ok: false, errors: (validate.errors ?? []).map(toSchemaError) };
  };
  cache.set(key, validator);
  return validator;
}
