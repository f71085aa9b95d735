/**
 * The original binding's convention: structured arguments and results cross
 * the API as JSON strings. These helpers are the only place the compat
 * layer parses or prints them, so a malformed argument is always an
 * `invalid_params` naming the argument, never a bare `SyntaxError`.
 */
import { CarError, isJsonObject, type JsonObject, type ProposalInput } from "@car/ir";

/** `text` parsed as JSON; `what` names the argument in the error. */
export function jsonArg(text: unknown, what: string): unknown {
  if (typeof text !== "string") throw new CarError("invalid_params", `${what} must be a JSON string, got ${text === null ? "null" : typeof text}`);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new CarError("invalid_params", `${what} is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * A proposal argument, parsed. Typed as input without checking: the data came
 * off the wire, and the runtime validates its shape (`invalid_proposal`)
 * when it parses it, as it does for any caller.
 */
export function proposalArg(text: unknown, what: string): ProposalInput {
  return jsonArg(text, what) as ProposalInput;
}

/** An optional JSON-object argument (`undefined` or `null` leave it out): parsed, and anything but an object is `invalid_params` naming it. */
export function optionalObjectArg(text: unknown, what: string): JsonObject | undefined {
  if (text === undefined || text === null) return undefined;
  const value = jsonArg(text, what);
  if (!isJsonObject(value)) throw new CarError("invalid_params", `${what} must be a JSON object`);
  return value;
}

/** A result as the original returns it: JSON text. */
export function jsonResult(value: unknown): string {
  return JSON.stringify(value ?? null);
}

/** An optional string argument (`undefined` or `null` leave it out); anything else is `invalid_params` naming it. */
export function optionalStringArg(value: unknown, what: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw new CarError("invalid_params", `${what} must be a string or null, got ${describe(value)}`);
  return value;
}

/** A required string argument; anything else is `invalid_params` naming it. */
export function stringArg(value: unknown, what: string): string {
  if (typeof value !== "string") throw new CarError("invalid_params", `${what} must be a string, got ${describe(value)}`);
  return value;
}

/** An array of strings (e.g. `taskKeywords`). */
export function stringListArg(value: unknown, what: string): string[] {
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) throw new CarError("invalid_params", `${what} must be an array of strings`);
  return [...value] as string[];
}

/** An optional number (`undefined` or `null` leave it out) satisfying `ok`, which `rule` describes. */
export function optionalNumberArg(value: unknown, what: string, ok: (n: number) => boolean, rule: string): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "number" || !ok(value)) throw new CarError("invalid_params", `${what} must be ${rule}, got ${describe(value)}`);
  return value;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number") return String(value);
  return typeof value;
}
