/**
 * `enum`, `const` and `uniqueItems` for tool schemas, by JSON equality.
 * ajv's own versions compare with fast-deep-equal, which treats objects of
 * different prototypes as unequal and calls `valueOf` on them; the values we
 * validate are parsed into prototype-free maps (so `__proto__` is an ordinary
 * key), which made equal objects unequal and `uniqueItems` throw a TypeError.
 * `uniqueItems` keys each item by its canonical JSON, so a long array costs
 * one pass rather than a comparison of every pair.
 */
import type { ErrorObject, KeywordDefinition, SchemaValidateFunction } from "ajv";
import { canonicalJson } from "./canonical.ts";
import { jsonEquals } from "./json.ts";
import type { JsonValue } from "./types.ts";

/** ajv fills in where the error is (`instancePath`, `schemaPath`); the keyword says what. */
function withError(validate: SchemaValidateFunction, keyword: string, message: string, params: Record<string, unknown>): false {
  validate.errors = [{ keyword, message, params } as ErrorObject];
  return false;
}

const enumValidate: SchemaValidateFunction = function validateEnum(schema: JsonValue[], data: unknown) {
  if (schema.some((allowed) => jsonEquals(allowed, data))) return true;
  return withError(validateEnum, "enum", "must be equal to one of the allowed values", { allowedValues: schema });
};

const constValidate: SchemaValidateFunction = function validateConst(schema: JsonValue, data: unknown) {
  if (jsonEquals(schema, data)) return true;
  return withError(validateConst, "const", "must be equal to constant", { allowedValue: schema });
};

/** A key equal for two items exactly when they are equal JSON (`1` and `1.0` are one number). */
function itemKey(item: unknown): string {
  return typeof item === "object" && item !== null ? canonicalJson(item as JsonValue) : `${typeof item}:${String(item)}`;
}

const uniqueValidate: SchemaValidateFunction = function validateUnique(schema: boolean, data: unknown) {
  if (schema !== true || !Array.isArray(data)) return true;
  const seen = new Map<string, number>();
  for (let j = 0; j < data.length; j++) {
    const key = itemKey(data[j]);
    const i = seen.get(key);
    if (i !== undefined) return withError(validateUnique, "uniqueItems", `must NOT have duplicate items (items ## ${i} and ${j} are identical)`, { i, j });
    seen.set(key, j);
  }
  return true;
};

/** The three keyword definitions that replace ajv's built-in ones. */
export const JSON_EQUALITY_KEYWORDS: readonly KeywordDefinition[] = [
  { keyword: "enum", schemaType: "array", errors: true, validate: enumValidate },
  { keyword: "const", errors: true, validate: constValidate },
  { keyword: "uniqueItems", schemaType: "boolean", type: "array", errors: true, validate: uniqueValidate },
];
