/**
 * Errors on the wire, both ways. A server's JSON-RPC error becomes a
 * `CarRpcError`: a `CarError` whose code is read from the error's data and
 * number through @car/ir's one table (never from its prose), keeping the
 * number and data as they came. A handler of a server request throws a
 * `ReplyError` to answer with a JSON-RPC error of its choosing.
 */
import { CarError, carCodeForRpcError, type CarErrorCode, ERROR_CODES, isCarError, type JsonValue } from "@car/ir";

export interface RpcErrorObject {
  code: number;
  message: string;
  data?: JsonValue;
}

/** The server answered a call with a JSON-RPC error. */
export class CarRpcError extends CarError {
  override readonly name: string = "CarError";
  /** The method that was called. */
  readonly method: string;
  /** The JSON-RPC error code as the server sent it. */
  readonly rpcCode: number;
  /** The error's `data`, as the server sent it. */
  readonly data: JsonValue | undefined;

  constructor(method: string, error: RpcErrorObject) {
    const code: CarErrorCode = carCodeForRpcError(error.code, error.data);
    const details = error.data !== null && typeof error.data === "object" && !Array.isArray(error.data) ? error.data["details"] : undefined;
    super(code, error.message, details !== null && typeof details === "object" && !Array.isArray(details) ? { ...details } : {});
    this.method = method;
    this.rpcCode = error.code;
    this.data = error.data;
  }

  /** The error object as it came on the wire. */
  toRpcError(): RpcErrorObject {
    return this.data === undefined ? { code: this.rpcCode, message: this.message } : { code: this.rpcCode, message: this.message, data: this.data };
  }
}

/** Thrown by a server-request handler: the client answers with exactly this JSON-RPC error. */
export class ReplyError extends Error {
  override readonly name: string = "ReplyError";
  constructor(
    readonly code: number,
    message: string,
    readonly data?: JsonValue,
  ) {
    super(message);
  }
}

/** JSON-RPC's own "internal error", for a handler that failed with something other than a CarError or a ReplyError. */
const RPC_INTERNAL_ERROR = -32603;

/** What a handler's failure answers the server with: a ReplyError as it is, a CarError through the table, anything else as internal. */
export function replyFor(err: unknown): RpcErrorObject {
  if (err instanceof ReplyError)
    return err.data === undefined ? { code: err.code, message: err.message } : { code: err.code, message: err.message, data: err.data };
  if (isCarError(err)) return { code: ERROR_CODES[err.code].jsonrpc, message: err.message, data: { car_code: err.code } };
  return { code: RPC_INTERNAL_ERROR, message: err instanceof Error ? err.message : String(err) };
}
