/**
 * JSON-RPC 2.0 framing: classify one decoded frame and build the reply
 * envelopes. Nothing here knows about CAR methods; it only decides whether a
 * frame is a request, a notification, a response to one of our own
 * server→client requests, or something that must be answered with -32600.
 */
import { ERROR_CODES, hasKey, isCarError, isJsonObject, type JsonValue } from "@car/ir";

export type RpcId = string | number | null;

/** Protocol-level codes that exist below the CarError table (JSON-RPC and transport admission). */
export const RPC_PARSE_ERROR = -32700;
export const RPC_INVALID_REQUEST = -32600;
export const RPC_METHOD_NOT_FOUND = -32601;
export const RPC_INTERNAL_ERROR = -32603;
/** Transport auth required: the connection has not presented the token (it is closed after this reply). */
export const RPC_AUTH_REQUIRED = -32001;
/** `server.handshake` asked for a protocol version this server does not speak. */
export const RPC_PROTOCOL_MISMATCH = -32006;
/** A method that needs `server.handshake` first (`host.subscribe`), called on an unnegotiated connection. */
export const RPC_HANDSHAKE_REQUIRED = -32005;
/** `server.handshake` required a capability this server does not have. */
export const RPC_CAPABILITY_MISMATCH = -32008;

export interface RpcErrorObject {
  code: number;
  message: string;
  data?: JsonValue;
}

/**
 * A failure that is about the transport or the JSON-RPC envelope rather than
 * about CAR itself, so it carries its JSON-RPC number directly. Everything
 * CAR-level travels as a `CarError` and is mapped through `ERROR_CODES`.
 */
export class RpcFault extends Error {
  override readonly name: string = "RpcFault";
  constructor(
    readonly code: number,
    message: string,
    readonly data?: JsonValue,
  ) {
    super(message);
  }
}

export type Incoming =
  | { kind: "request"; id: RpcId; method: string; params: JsonValue | undefined }
  | { kind: "notification"; method: string; params: JsonValue | undefined }
  | { kind: "response"; id: RpcId; result?: JsonValue; error?: RpcErrorObject }
  | { kind: "invalid"; id: RpcId; message: string };

function isRpcId(value: unknown): value is RpcId {
  return value === null || typeof value === "string" || (typeof value === "number" && Number.isFinite(value));
}

function isErrorObject(value: unknown): value is RpcErrorObject {
  return isJsonObject(value) && typeof value["code"] === "number" && typeof value["message"] === "string";
}

/** Classifies one element of a frame (a frame is one message or a batch array of them). */
export function classifyMessage(value: unknown): Incoming {
  if (!isJsonObject(value)) return { kind: "invalid", id: null, message: "a JSON-RPC message must be an object" };
  const rawId = value["id"];
  const hasId = hasKey(value, "id");
  const id: RpcId = isRpcId(rawId) ? rawId : null;
  if (value["jsonrpc"] !== "2.0") return { kind: "invalid", id, message: 'jsonrpc must be "2.0"' };
  if (hasId && !isRpcId(rawId)) return { kind: "invalid", id: null, message: "id must be a string, a number or null" };

  const method = value["method"];
  if (method === undefined) {
    const hasResult = hasKey(value, "result");
    const rawError = value["error"];
    if (!hasId || hasResult === (rawError !== undefined)) {
      return { kind: "invalid", id, message: "a message needs a method, or an id with exactly one of result and error" };
    }
    if (hasResult) return { kind: "response", id, result: value["result"] as JsonValue };
    if (!isErrorObject(rawError)) return { kind: "invalid", id, message: "error must be an object with a numeric code and a message" };
    return { kind: "response", id, error: rawError };
  }
  if (typeof method !== "string" || method === "") return { kind: "invalid", id, message: "method must be a non-empty string" };
  const params = value["params"];
  if (params !== undefined && params !== null && typeof params !== "object") {
    return { kind: "invalid", id, message: "params must be an object or an array" };
  }
  if (!hasId) return { kind: "notification", method, params: params as JsonValue | undefined };
  return { kind: "request", id, method, params: params as JsonValue | undefined };
}

export function resultFrame(id: RpcId, result: JsonValue): { jsonrpc: "2.0"; id: RpcId; result: JsonValue } {
  return { jsonrpc: "2.0", id, result };
}

export function errorFrame(id: RpcId, error: RpcErrorObject): { jsonrpc: "2.0"; id: RpcId; error: RpcErrorObject } {
  return { jsonrpc: "2.0", id, error };
}

/**
 * Maps anything a handler threw to a JSON-RPC error object: protocol faults
 * keep their number, `CarError`s go through the shared `ERROR_CODES` table
 * (with the CAR code in `data` so clients need not parse messages), and
 * anything else is an internal error.
 */
export function toRpcError(err: unknown): RpcErrorObject {
  if (err instanceof RpcFault) {
    return err.data === undefined ? { code: err.code, message: err.message } : { code: err.code, message: err.message, data: err.data };
  }
  if (isCarError(err)) {
    const data: { car_code: string; details?: JsonValue } = { car_code: err.code };
    if (Object.keys(err.details).length > 0) data.details = err.details as JsonValue;
    return { code: ERROR_CODES[err.code].jsonrpc, message: err.message, data };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { code: RPC_INTERNAL_ERROR, message: `internal error: ${message}`, data: { car_code: "internal" } };
}

/**
 * Deepest nesting a frame may have. Far beyond any proposal, schema or
 * output a client sends, and low enough that every recursive step behind
 * the door (copies, canonical JSON, schema validation, serialising replies)
 * stays well inside the stack.
 */
export const MAX_FRAME_DEPTH = 256;

/** Whether `value` nests arrays and objects more than `max` levels deep; iterative, so any depth is safe to ask about. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  // Two parallel stacks rather than a pair per node: this runs on every frame.
  const values: unknown[] = [value];
  const depths: number[] = [0];
  while (values.length > 0) {
    const v = values.pop();
    const depth = depths.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth >= max) return true;
    if (Array.isArray(v)) {
      for (const child of v) {
        if (child !== null && typeof child === "object") {
          values.push(child);
          depths.push(depth + 1);
        }
      }
    } else {
      for (const key in v) {
        const child = (v as Record<string, unknown>)[key];
        if (child !== null && typeof child === "object") {
          values.push(child);
          depths.push(depth + 1);
        }
      }
    }
  }
  return false;
}

/** Whether JSON text this long could nest more than `max` levels: each level takes an opening and a closing bracket. */
export function couldNestDeeperThan(text: string, max: number): boolean {
  return text.length > 2 * max;
}
