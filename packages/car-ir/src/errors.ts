/**
 * One error family for every CAR package. A `CarError` carries a stable `code`
 * from a closed table; transports (JSON-RPC, CLI) map codes through
 * `ERROR_CODES` instead of inventing their own numbers.
 */

/**
 * Every code, with the JSON-RPC error code and CLI exit code it maps to.
 * Numbers the reference protocol assigns keep their meaning (-32001 auth
 * required, -32003 approval denied); -32000…-32008 are otherwise left to it.
 */
export const ERROR_CODES = {
  invalid_proposal: { jsonrpc: -32602, exit: 2, summary: "the proposal is malformed" },
  invalid_params: { jsonrpc: -32602, exit: 2, summary: "a request's arguments are malformed" },
  invalid_schema: { jsonrpc: -32602, exit: 2, summary: "a JSON Schema does not compile" },
  unknown_tool: { jsonrpc: -32013, exit: 1, summary: "a tool is not registered" },
  schema_mismatch: { jsonrpc: -32014, exit: 1, summary: "a value does not match its JSON Schema" },
  verification_failed: { jsonrpc: -32015, exit: 1, summary: "static verification rejected the proposal" },
  policy_denied: { jsonrpc: -32010, exit: 1, summary: "a policy denied the action" },
  policy_load_failed: { jsonrpc: -32011, exit: 2, summary: "a policy file could not be loaded" },
  approval_denied: { jsonrpc: -32003, exit: 1, summary: "an approval was refused or timed out" },
  timeout: { jsonrpc: -32020, exit: 1, summary: "a deadline expired" },
  tool_error: { jsonrpc: -32021, exit: 1, summary: "a tool reported an error" },
  terminal_failure: { jsonrpc: -32022, exit: 1, summary: "a tool reported a terminal failure" },
  invalid_output: { jsonrpc: -32023, exit: 1, summary: "a tool returned output that is not valid" },
  cancelled: { jsonrpc: -32024, exit: 1, summary: "the operation was cancelled" },
  rate_limited: { jsonrpc: -32025, exit: 1, summary: "a rate limit was exceeded" },
  budget_exceeded: { jsonrpc: -32026, exit: 1, summary: "a cost budget was exceeded" },
  stale_read: { jsonrpc: -32030, exit: 1, summary: "a key read by the proposal changed before commit" },
  write_conflict: { jsonrpc: -32031, exit: 1, summary: "a concurrent writer committed the same key first" },
  interrupted: { jsonrpc: -32032, exit: 1, summary: "a proposal was interrupted before it completed" },
  duplicate_proposal: { jsonrpc: -32033, exit: 1, summary: "a run of a proposal with this id is still executing" },
  not_found: { jsonrpc: -32040, exit: 1, summary: "the requested item does not exist" },
  unauthorized: { jsonrpc: -32001, exit: 2, summary: "authentication is missing or wrong" },
  storage_error: { jsonrpc: -32050, exit: 1, summary: "the durable store failed" },
  chain_broken: { jsonrpc: -32051, exit: 1, summary: "the audit hash chain does not verify" },
  internal: { jsonrpc: -32603, exit: 3, summary: "an internal invariant failed" },
} as const satisfies Record<string, { jsonrpc: number; exit: number; summary: string }>;

export type CarErrorCode = keyof typeof ERROR_CODES;

/** One located problem, e.g. a JSON pointer into a proposal and what is wrong there. */
export interface ErrorProblem {
  pointer: string;
  message: string;
}

export interface CarErrorDetails {
  problems?: ErrorProblem[];
  [key: string]: unknown;
}

export class CarError extends Error {
  override readonly name: string = "CarError";
  readonly code: CarErrorCode;
  readonly details: CarErrorDetails;

  constructor(code: CarErrorCode, message: string, details: CarErrorDetails = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.details = details;
  }

  /** The JSON-RPC error code this error maps to. */
  get jsonrpcCode(): number {
    return ERROR_CODES[this.code].jsonrpc;
  }

  /** The CLI exit code this error maps to. */
  get exitCode(): number {
    return ERROR_CODES[this.code].exit;
  }

  toJSON(): { code: CarErrorCode; message: string; details: CarErrorDetails } {
    return { code: this.code, message: this.message, details: this.details };
  }
}

/**
 * Whether `value` is a CarError (with `code`, when given). One from another
 * copy of @car/ir (a duplicated dependency) is not `instanceof` this class,
 * so it is also recognised by its shape: named "CarError", with a string
 * message, a code from the table above and a details object.
 */
export function isCarError(value: unknown, code?: CarErrorCode): value is CarError {
  if (!(value instanceof CarError) && !isForeignCarError(value)) return false;
  return code === undefined || value.code === code;
}

function isForeignCarError(value: unknown): value is CarError {
  if (typeof value !== "object" || value === null) return false;
  const v = value as { name?: unknown; code?: unknown; message?: unknown; details?: unknown };
  return (
    v.name === "CarError" &&
    typeof v.message === "string" &&
    typeof v.code === "string" &&
    Object.hasOwn(ERROR_CODES, v.code) &&
    typeof v.details === "object" &&
    v.details !== null
  );
}

/** Wraps anything thrown into a `CarError`, keeping an existing one (from any copy of this package) as it is. */
export function toCarError(value: unknown, code: CarErrorCode = "internal"): CarError {
  if (isCarError(value)) return value;
  const message = value instanceof Error ? value.message : String(value);
  return new CarError(code, message, {}, { cause: value });
}

/**
 * JSON-RPC numbers that stand outside the table above: the envelope's own
 * (JSON-RPC 2.0) and the reference protocol's transport codes. Each reads as
 * the CarError code a client should see; -32602 is the generic
 * `invalid_params` (a server that knows better says so in `data.car_code`).
 */
export const RPC_PROTOCOL_CODES: Readonly<Record<number, CarErrorCode>> = Object.freeze({
  [-32700]: "invalid_params", // parse error: the frame was not JSON
  [-32600]: "invalid_params", // invalid request: not a JSON-RPC message
  [-32601]: "not_found", // method not found
  [-32602]: "invalid_params",
  [-32603]: "internal",
  [-32004]: "timeout", // a handler ran past its deadline
  [-32006]: "invalid_params", // server.handshake: protocol version mismatch
  [-32008]: "invalid_params", // server.handshake: a required capability is missing
});

/**
 * The CarError code a JSON-RPC error stands for, read from data, never from
 * the message: the server's `data.car_code` when it names a code of the
 * table, else the protocol code above, else the one table code with that
 * number, else `internal`.
 */
export function carCodeForRpcError(rpcCode: number, data?: unknown): CarErrorCode {
  if (typeof data === "object" && data !== null && !Array.isArray(data)) {
    const named = (data as { car_code?: unknown }).car_code;
    if (typeof named === "string" && Object.hasOwn(ERROR_CODES, named)) return named as CarErrorCode;
  }
  const protocol = Object.hasOwn(RPC_PROTOCOL_CODES, rpcCode) ? RPC_PROTOCOL_CODES[rpcCode] : undefined;
  if (protocol !== undefined) return protocol;
  for (const [code, entry] of Object.entries(ERROR_CODES)) if (entry.jsonrpc === rpcCode) return code as CarErrorCode;
  return "internal";
}
