/**
 * Tool outputs become state, references and audit data, so they must be
 * plain I-JSON. A JSON round trip both checks that (cycles, BigInt and
 * functions fail; `undefined` at the top means "no output", i.e. null) and
 * detaches the value from anything the tool still holds. Outputs larger
 * than the runtime's `maxOutputBytes` are refused rather than kept.
 */
import type { JsonValue, ToolStreamChunk } from "@car/ir";
import { ActionFailure } from "./action-failure.ts";

export function toJsonOutput(value: unknown, maxBytes: number): JsonValue | ActionFailure {
  if (value === undefined || value === null) return null;
  switch (typeof value) {
    case "boolean":
      return value;
    case "number":
      return Number.isFinite(value) ? value : new ActionFailure(`tool output is not valid JSON: the number ${value} is not finite`, "validation");
    case "string":
      if (value.length > maxBytes) return tooLarge(value.length, maxBytes);
      return value.isWellFormed() ? value : notIJson();
    case "object":
      break;
    default:
      return new ActionFailure(`tool output is not valid JSON: a ${typeof value} is not a JSON value`, "validation");
  }
  let text: string | undefined;
  try {
    const flat = flatRecordCopy(value as object, maxBytes);
    if (flat !== undefined) return flat;
    text = JSON.stringify(value);
  } catch (error) {
    return new ActionFailure(`tool output is not valid JSON: ${(error as Error).message}`, "validation");
  }
  if (text === undefined) return new ActionFailure("tool output is not valid JSON", "validation");
  if (text.length > maxBytes) return tooLarge(text.length, maxBytes);
  return checkedIJson(JSON.parse(text) as JsonValue);
}

/** An upper bound on the JSON length of a string: every code unit escaped as \uXXXX, plus the quotes. */
const jsonLengthBound = (s: string): number => 6 * s.length + 2;
/** The longest JSON a finite number can take (`-1.2345678901234567e-308`). */
const NUMBER_JSON_MAX = 25;

/**
 * What the JSON round trip gives for the common output — a plain object
 * whose members are all strings, finite numbers, booleans or null, surely
 * under `maxBytes` — built directly: the same members in the same order, -0
 * as 0. `undefined` for anything else (nested values, `toJSON`, a
 * `__proto__` member, a bound that might exceed the limit), which takes the
 * round trip.
 */
function flatRecordCopy(value: object, maxBytes: number): Record<string, JsonValue> | undefined {
  if (Array.isArray(value)) return undefined;
  const proto = Object.getPrototypeOf(value);
  if ((proto !== Object.prototype && proto !== null) || typeof (value as { toJSON?: unknown }).toJSON === "function") return undefined;
  const source = value as Record<string, unknown>;
  const copy: Record<string, JsonValue> = {};
  let bound = 2;
  for (const key in source) {
    if (!Object.hasOwn(source, key)) return undefined;
    if (key === "__proto__" || !key.isWellFormed()) return undefined;
    const member = source[key];
    bound += jsonLengthBound(key) + 2;
    switch (typeof member) {
      case "string":
        if (!member.isWellFormed()) return undefined;
        bound += jsonLengthBound(member);
        copy[key] = member;
        break;
      case "number":
        if (!Number.isFinite(member)) return undefined;
        bound += NUMBER_JSON_MAX;
        copy[key] = member === 0 ? 0 : member;
        break;
      case "boolean":
        bound += 5;
        copy[key] = member;
        break;
      default:
        if (member !== null) return undefined;
        bound += 4;
        copy[key] = null;
    }
  }
  return bound <= maxBytes ? copy : undefined;
}

/** Parses a callback's JSON-string answer; anything that is not JSON is a validation failure. */
export function parseJsonOutput(text: unknown, maxBytes: number): JsonValue | ActionFailure {
  if (typeof text !== "string") return new ActionFailure(`the tool callback must return a JSON string, got ${typeof text}`, "validation");
  if (text.length > maxBytes) return tooLarge(text.length, maxBytes);
  let value: JsonValue;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch (error) {
    return new ActionFailure(`the tool callback returned output that is not JSON: ${(error as Error).message}`, "validation");
  }
  return checkedIJson(value);
}

/**
 * I-JSON (RFC 7493) forbids lone surrogates. `JSON.stringify` escapes them
 * rather than failing, so every string (and key) is checked: such a value
 * cannot be canonicalised for digests or hash chains downstream.
 */
function checkedIJson(value: JsonValue): JsonValue | ActionFailure {
  return isIJson(value) ? value : notIJson();
}

function isIJson(value: JsonValue): boolean {
  if (typeof value === "string") return value.isWellFormed();
  if (value === null || typeof value !== "object") return true;
  if (Array.isArray(value)) return value.every(isIJson);
  for (const key of Object.keys(value)) if (!key.isWellFormed() || !isIJson(value[key]!)) return false;
  return true;
}

function notIJson(): ActionFailure {
  return new ActionFailure("tool output is not I-JSON: it holds a string with a lone surrogate", "validation");
}

function tooLarge(size: number, maxBytes: number): ActionFailure {
  return new ActionFailure(`tool output is ${size} bytes of JSON, over the ${maxBytes}-byte limit`, "validation");
}

const CHUNK_KINDS = new Set(["text", "data", "progress", "done", "error"]);

/** Checks one value a streaming tool yielded against the ToolStreamChunk shapes. */
export function checkChunk(value: unknown, maxBytes: number): { ok: true; chunk: ToolStreamChunk } | { ok: false; message: string } {
  const json = toJsonOutput(value, maxBytes);
  if (json instanceof ActionFailure) return { ok: false, message: json.message };
  if (json === null || typeof json !== "object" || Array.isArray(json) || typeof json["kind"] !== "string" || !CHUNK_KINDS.has(json["kind"])) {
    return { ok: false, message: "a streaming tool yielded a value that is not a ToolStreamChunk" };
  }
  const c = json as Record<string, JsonValue>;
  const bad =
    (c["kind"] === "text" && typeof c["text"] !== "string") ||
    (c["kind"] === "progress" && typeof c["fraction"] !== "number") ||
    (c["kind"] === "error" && typeof c["message"] !== "string") ||
    (c["kind"] === "data" && !Object.hasOwn(c, "data"));
  if (bad) return { ok: false, message: `a streaming tool yielded a malformed '${String(c["kind"])}' chunk` };
  return { ok: true, chunk: json as unknown as ToolStreamChunk };
}
