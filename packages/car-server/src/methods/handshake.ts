/**
 * `server.handshake`: negotiates the wire protocol version for this
 * connection. Exact-version and fail-closed, as the reference specifies: a
 * missing or different version is refused and leaves the session
 * unnegotiated; a required capability we lack is refused too.
 */
import type { JsonValue } from "@car/ir";
import { RPC_CAPABILITY_MISMATCH, RPC_PROTOCOL_MISMATCH, RpcFault } from "../jsonrpc.ts";
import { type MethodContext, type MethodTable, agentMethod } from "../method.ts";
import { optionalArray, optionalString, paramsObject, stringArray } from "../params.ts";
import { VERSION } from "../version.ts";
import { RUNS_CANCEL_CAPABILITY, RUNS_RESUME_CAPABILITY } from "./runs.ts";
import { RUNS_PAGINATION_CAPABILITY } from "../runs/run-pages.ts";

/** The wire protocol version this server speaks (the reference's v3 envelope). */
export const PROTOCOL_VERSION = 3;

/**
 * The capability that makes a connection's session private (its own empty
 * state, event log and ledger): what a test suite such as RuntimeBench asks
 * for so each of its scenarios starts from an empty runtime on a durable server.
 */
export const ISOLATED_SESSION_CAPABILITY = "session.isolated.v1";

/** The reference's capability for the exact per-(agent, tool) override methods (`agent_permissions.set_tool` / `evaluate_tool`). */
export const TOOL_OVERRIDES_CAPABILITY = "permissions.agent-tool-overrides.v1";

/** Optional protocol capabilities this server implements: its own isolation, the reference's run recovery, cancellation and pagination, and exact tool overrides. */
const CAPABILITIES: ReadonlySet<string> = new Set([
  ISOLATED_SESSION_CAPABILITY,
  RUNS_RESUME_CAPABILITY,
  RUNS_CANCEL_CAPABILITY,
  RUNS_PAGINATION_CAPABILITY,
  TOOL_OVERRIDES_CAPABILITY,
]);

function handshake(params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  const p = paramsObject(params);
  const requested = p["protocol_version"];
  if (typeof requested !== "number") {
    throw new RpcFault(RPC_PROTOCOL_MISMATCH, `protocol version mismatch: protocol_version is required (server speaks ${PROTOCOL_VERSION})`);
  }
  if (requested !== PROTOCOL_VERSION) {
    throw new RpcFault(RPC_PROTOCOL_MISMATCH, `protocol version mismatch: client speaks ${requested}, server speaks ${PROTOCOL_VERSION}`);
  }
  const required = stringArray(optionalArray(p, "required_capabilities") ?? [], "required_capabilities");
  const optional = stringArray(optionalArray(p, "optional_capabilities") ?? [], "optional_capabilities");
  const missing = required.filter((c) => !CAPABILITIES.has(c));
  if (missing.length > 0) {
    throw new RpcFault(RPC_CAPABILITY_MISMATCH, `protocol capability mismatch: unsupported ${missing.join(", ")}`, { unsupported: missing });
  }
  const negotiated = [...new Set([...required, ...optional].filter((c) => CAPABILITIES.has(c)))].sort();
  if (negotiated.includes(ISOLATED_SESSION_CAPABILITY)) ctx.session.isolate();
  ctx.session.negotiatedProtocol = PROTOCOL_VERSION;
  ctx.session.capabilities = new Set(negotiated);
  return {
    protocol_version: PROTOCOL_VERSION,
    server_version: VERSION,
    client_protocol_version: requested,
    client_version: (optionalString(p, "client_version") ?? "unknown").slice(0, 64),
    negotiated_capabilities: negotiated,
  };
}

export const handshakeMethods: MethodTable = { "server.handshake": agentMethod(handshake) };
