/**
 * What one JSON-RPC method is on the wire: who may call it, its params and
 * its result, each a JSON Schema. The server validates params against the
 * schema before the handler runs, answers `server.schema` from these
 * declarations, and the client's call types are inferred from them — so a
 * method is described exactly once.
 */
import type { Schema } from "./schema.ts";

/** `agent`: any authenticated connection. `operator`: only a connection acting for no agent (no `?agent_id=`). */
export type MethodRole = "operator" | "agent";

export interface MethodDeclaration {
  readonly role: MethodRole;
  /** One line for `server.schema` and the client's docs. */
  readonly summary: string;
  readonly params: Schema;
  readonly result: Schema;
}

/** A server→client request or notification: what the server sends, and (for a request) what it expects back. */
export interface CallbackDeclaration {
  readonly summary: string;
  readonly params: Schema;
  /** Absent for a notification. */
  readonly result?: Schema;
}

/** Declares one method; the identity function keeps the literal schemas for type inference. */
export function method<const D extends MethodDeclaration>(declaration: D): D {
  return declaration;
}

/** Declares one server→client message. */
export function callback<const D extends CallbackDeclaration>(declaration: D): D {
  return declaration;
}
