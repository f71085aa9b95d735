/**
 * The shape every method handler has. A handler gets the decoded params and
 * the calling connection's session; it returns the JSON-RPC `result` or
 * throws (a `CarError`, or an `RpcFault` for protocol-level refusals).
 */
import type { JsonValue } from "@car/ir";
import type { Session } from "./session.ts";

export interface MethodContext {
  session: Session;
  /** Fires when the connection closes or a forced shutdown abandons the call. */
  signal: AbortSignal;
}

export type MethodHandler = (params: JsonValue | undefined, ctx: MethodContext) => JsonValue | Promise<JsonValue>;

/** A method table fragment: one file per namespace contributes one. */
export type MethodTable = Readonly<Record<string, MethodHandler>>;
