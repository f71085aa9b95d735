/**
 * The original binding's convention: structured arguments and results cross
 * the API as JSON strings. These helpers are the only place the compat
 * layer parses or prints them, so a malformed argument is always an
 * `invalid_params` naming the argument, never a bare `SyntaxError`.
 */
import { CarError, type ProposalInput } from "@car/ir";

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

/** A result as the original returns it: JSON text. */
export function jsonResult(value: unknown): string {
  return JSON.stringify(value ?? null);
}

/** An optional string argument (`undefined` or `null` leave it out); anything else is `invalid_params` naming it. */
export function optionalStringArg(value: unknown, what: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw new CarError("invalid_params", `${what} must be a string or null, got ${Array.isArray(value) ? "array" : typeof value}`);
  return value;
}
