/**
 * Readers for method params. Every failure is a `CarError("invalid_params")`
 * (JSON-RPC -32602) whose message names the field, so a client can tell a
 * malformed request from an internal failure by the code alone and still see
 * what was wrong.
 */
import { CarError, getOwn, isJsonObject, type JsonObject, type JsonValue } from "@car/ir";

export function invalidParams(message: string): CarError {
  return new CarError("invalid_params", `invalid params: ${message}`);
}

/** The params as an object; absent or `null` params read as `{}`. */
export function paramsObject(params: JsonValue | undefined): JsonObject {
  if (params === undefined || params === null) return {};
  if (!isJsonObject(params)) throw invalidParams("expected an object");
  return params;
}

export function requireString(obj: JsonObject, key: string): string {
  const value = getOwn(obj, key);
  if (value === undefined || value === null) throw invalidParams(`${key} is required`);
  if (typeof value !== "string") throw invalidParams(`${key} must be a string`);
  return value;
}

export function optionalString(obj: JsonObject, key: string): string | undefined {
  const value = getOwn(obj, key);
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw invalidParams(`${key} must be a string`);
  return value;
}

export function optionalNumber(obj: JsonObject, key: string): number | undefined {
  const value = getOwn(obj, key);
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value)) throw invalidParams(`${key} must be a number`);
  return value;
}

export function optionalBoolean(obj: JsonObject, key: string): boolean | undefined {
  const value = getOwn(obj, key);
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw invalidParams(`${key} must be a boolean`);
  return value;
}

export function requireValue(obj: JsonObject, key: string): JsonValue {
  const value = getOwn(obj, key);
  if (value === undefined) throw invalidParams(`${key} is required`);
  return value;
}

export function optionalObject(obj: JsonObject, key: string): JsonObject | undefined {
  const value = getOwn(obj, key);
  if (value === undefined || value === null) return undefined;
  if (!isJsonObject(value)) throw invalidParams(`${key} must be an object`);
  return value;
}

export function requireObject(obj: JsonObject, key: string): JsonObject {
  const value = optionalObject(obj, key);
  if (value === undefined) throw invalidParams(`${key} is required`);
  return value;
}

export function optionalArray(obj: JsonObject, key: string): JsonValue[] | undefined {
  const value = getOwn(obj, key);
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw invalidParams(`${key} must be an array`);
  return value;
}

export function requireArray(obj: JsonObject, key: string): JsonValue[] {
  const value = optionalArray(obj, key);
  if (value === undefined) throw invalidParams(`${key} is required`);
  return value;
}

export function stringArray(values: JsonValue[], key: string): string[] {
  return values.map((v, i) => {
    if (typeof v !== "string" || v === "") throw invalidParams(`${key}[${i}] must be a non-empty string`);
    return v;
  });
}
