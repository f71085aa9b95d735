/**
 * RFC 8785 (JCS) canonical JSON and the parameter digest the event log joins
 * on. canonicalize implements JCS exactly (number formatting, UTF-16 key
 * order), which a hand-rolled sorted `JSON.stringify` does not.
 */
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { CarError } from "./errors.ts";
import type { JsonValue } from "./types.ts";

/** The RFC 8785 canonical form of a JSON value; `invalid_params` for non-I-JSON input (lone surrogates, non-finite numbers). */
export function canonicalJson(value: JsonValue): string {
  let text: string | undefined;
  try {
    text = canonicalize(value);
  } catch (error) {
    throw new CarError("invalid_params", `value has no canonical JSON form: ${(error as Error).message}`, {}, { cause: error });
  }
  if (text === undefined) throw new CarError("invalid_params", "value has no canonical JSON form: not a JSON value");
  return text;
}

/** Lowercase hex SHA-256 of the canonical form of an action's `parameters`. */
export function paramsDigest(params: JsonValue): string {
  return createHash("sha256").update(canonicalJson(params), "utf8").digest("hex");
}
