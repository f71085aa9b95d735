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
import { JSON_EQUALITY_KEYWORDS } from "./schema-keywords.ts";
import { schemaRegExp } from "./schema-regexp.ts";
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

/**
 * Compiled validators by canonical JSON, held weakly: a validator lives as
 * long as a registered tool (or a caller) holds it, and its entry goes with
 * it, so unregistering tools and closing sessions gives the memory back.
 */
const cache = new Map<string, WeakRef<SchemaValidator>>();
const forget = new FinalizationRegistry<string>((key) => {
  if (cache.get(key)?.deref() === undefined) cache.delete(key);
});
/** The most recently compiled validators, held strongly so a caller that drops its validator between calls does not recompile. */
const RECENT_LIMIT = 64;
const recent: SchemaValidator[] = [];
let recentNext = 0;

let AjvCtor: typeof AjvClass | undefined;
/** Checks schemas against the draft-07 meta-schema; it compiles nothing else, so it does not grow. */
let metaChecker: AjvClass | undefined;

/** Tool authors write schemas for many drafts' worth of keywords; unknown keywords and formats are ignored rather than refused. */
const LENIENT = { strict: false, validateFormats: false } as const;

function ajvClass(): typeof AjvClass {
  AjvCtor ??= (createRequire(import.meta.url)("ajv") as typeof import("ajv")).Ajv;
  return AjvCtor;
}

/** Refuses a schema whose known keywords have the wrong shape (`{ "minimum": "x" }`). */
function checkAgainstMetaSchema(schema: JsonObject): void {
  const checker = (metaChecker ??= new (ajvClass())(LENIENT));
  if (!checker.validateSchema(schema)) {
    throw new CarError("invalid_schema", `JSON Schema does not compile: ${checker.errorsText(checker.errors, { dataVar: "schema" })}`, { schema });
  }
}

/**
 * A fresh ajv per compilation: an ajv instance keeps every schema it ever
 * compiled (its cache and the code scope its validators share), so one
 * long-lived instance would grow with every distinct schema a client sends.
 * A validator from its own instance keeps only what it needs (~4.5 KB).
 */
function compiler(): AjvClass {
  const ajv = new (ajvClass())({ ...LENIENT, allErrors: true, meta: false, validateSchema: false, code: { regExp: schemaRegExp } });
  for (const definition of JSON_EQUALITY_KEYWORDS) {
    ajv.removeKeyword(definition.keyword as string);
    ajv.addKeyword(definition);
  }
  return ajv;
}

function toSchemaError(error: ErrorObject): SchemaError {
  let path = error.instancePath;
  if (error.keyword === "required") path += `/${pointerToken(String(error.params["missingProperty"]))}`;
  return { path, schemaPath: error.schemaPath, message: error.message ?? error.keyword };
}

/** A validation that could not finish (a value nested past the stack, a schema that recurses without end) rejects the value. */
function unfinished(error: unknown): SchemaValidation {
  const why = error instanceof Error ? error.message : String(error);
  return { ok: false, errors: [{ path: "", schemaPath: "#", message: `could not be validated: ${why}` }] };
}

function remember(key: string, validator: SchemaValidator): void {
  cache.set(key, new WeakRef(validator));
  forget.register(validator, key);
  recent[recentNext] = validator;
  recentNext = (recentNext + 1) % RECENT_LIMIT;
}

/**
 * A validator for `schema`, compiled once and cached by the schema's
 * canonical JSON. A schema that does not compile — including a `pattern`
 * RE2 cannot run, and a schema that refers to itself without consuming the
 * value (`{ "$ref": "#" }`) — is `invalid_schema`. The validator never
 * throws: a value it cannot finish checking is rejected.
 */
export function compileSchema(schema: JsonObject): SchemaValidator {
  const key = canonicalJson(schema);
  const cached = cache.get(key)?.deref();
  if (cached !== undefined) return cached;
  let validate: ValidateFunction;
  try {
    // `$schema` names a draft; ajv's default class knows only draft-07 and
    // would refuse the others outright, while their common keywords agree.
    const { $schema: _draft, ...rest } = schema;
    checkAgainstMetaSchema(rest);
    validate = compiler().compile(rest);
  } catch (error) {
    if (error instanceof CarError) throw error;
    throw new CarError("invalid_schema", `JSON Schema does not compile: ${(error as Error).message}`, { schema }, { cause: error });
  }
  const validator: SchemaValidator = (value) => {
    try {
      if (validate(value)) return VALID;
    } catch (error) {
      return unfinished(error);
    }
    return { ok: false, errors: (validate.errors ?? []).map(toSchemaError) };
  };
  // A schema that loops on itself fails on any value; refuse it now rather than on every call.
  const probe = validator(null);
  if (!probe.ok && probe.errors[0]?.message.startsWith("could not be validated")) {
    throw new CarError("invalid_schema", `JSON Schema does not compile: it refers to itself without end (${probe.errors[0].message})`, { schema });
  }
  remember(key, validator);
  return validator;
}
