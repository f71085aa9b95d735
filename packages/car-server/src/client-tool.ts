/**
 * Runs one tool call on the client: the engine's typed `ToolCall` sent as a
 * `tools.execute` request on the connection, the answer read with the
 * engine's `readToolAnswer` (nothing is serialised in between). The call
 * is abandoned when the engine gives up on it (the action's `timeout_ms`, a
 * proposal abort, a shutdown) or when our own wait runs out, and in every
 * such case the client is told with a `tools.cancel` notification so it can
 * kill whatever it started. `received` learns the size of each answer's
 * frame as it came off the socket (a per-proposal byte budget counts it).
 */
import { CarError, isJsonObject, type JsonObject, type JsonValue } from "@car/ir";
import { readToolAnswer, TerminalToolError, type ToolCall } from "@car/engine";
import { ClientCallError } from "./peer.ts";
import type { Session } from "./session.ts";

/** Extra time past a declared `timeout_ms` before we stop waiting ourselves (the engine's deadline fires first). */
export const CALLBACK_GRACE_MS = 5_000;

export async function callClientTool(session: Session, call: ToolCall, engineSignal: AbortSignal, received?: (bytes: number) => void): Promise<JsonValue> {
  const requestId = session.peer.has(call.request_id) ? session.nextCallbackId("cb") : call.request_id;
  const declared = call.timeout_ms ?? undefined;
  const waitMs = declared === undefined ? session.options.toolTimeoutMs : declared + CALLBACK_GRACE_MS;
  const { tool, action_id: actionId } = call;

  const params: JsonObject = { action_id: actionId, tool, params: call.params, request_id: requestId, attempt: call.attempt };
  if (declared !== undefined) params["timeout_ms"] = declared;
  params["session_id"] = call.session_id ?? session.id;
  if (call.traceparent !== undefined) params["traceparent"] = call.traceparent;

  // "Stop waiting": the engine gave up, or our own wait ran out, whichever comes first. The first
  // reason wins and the peer drops the call with it (no AbortController per call: the engine's signal
  // and one timer are all it takes). The connection closing needs nothing here: the peer then fails
  // every outstanding call itself.
  let stopped: { reason: unknown } | undefined;
  const stop = (reason: unknown): void => {
    if (stopped !== undefined) return;
    stopped = { reason };
    session.peer.abandon(requestId, reason);
  };
  const onEngineAbort = (): void => stop(engineSignal.reason);
  let answer: JsonValue | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    if (engineSignal.aborted) {
      stopped = { reason: engineSignal.reason };
      throw engineSignal.reason;
    }
    engineSignal.addEventListener("abort", onEngineAbort, { once: true });
    timer = setTimeout(() => stop(new CarError("timeout", `tool '${tool}' callback timed out (${Math.round(waitMs / 1000)}s)`)), waitMs);
    answer = await session.peer.call("tools.execute", params, requestId, undefined, received);
  } catch (err) {
    if (stopped !== undefined && err === stopped.reason) {
      session.peer.notify("tools.cancel", { request_id: requestId, action_id: actionId, reason: describe(stopped.reason) });
      throw stopped.reason;
    }
    if (err instanceof ClientCallError) {
      const data = err.error.data;
      if (isJsonObject(data) && data["terminal"] === true) throw new TerminalToolError(err.message);
      throw new CarError("tool_error", err.message, { jsonrpc_code: err.error.code });
    }
    throw err;
  } finally {
    clearTimeout(timer);
    engineSignal.removeEventListener("abort", onEngineAbort);
  }
  return readToolAnswer(answer ?? null);
}

function describe(reason: unknown): JsonValue {
  return reason instanceof Error ? reason.message : String(reason);
}
