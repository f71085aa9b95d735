/**
 * The tool call as it leaves the engine for anything that is not a
 * registered handler — the seeds' callback envelope
 * `{ tool, params, action_id, request_id, timeout_ms, session_id, attempt }`
 * — and the one rule for reading what comes back: `{"error": …}` is a
 * failure (terminal only with `"terminal": true`), anything else the output.
 *
 * Transports in this process (the WebSocket client tool) take the typed
 * call and hand back the answer value; only a real process boundary (the
 * JSON-string callback, a program on stdin) serialises it.
 */
import { CarError, getOwn, isJsonObject } from "@car/ir";
import type { JsonObject, JsonValue } from "@car/ir";
import { ActionFailure } from "./action-failure.ts";
import type { ToolCallback, ToolCallContext } from "./handler.ts";
import { TerminalToolError } from "./terminal-tool-error.ts";
import { parseJsonOutput } from "./tool-output.ts";

export interface ToolCall {
  tool: string;
  params: JsonObject;
  action_id: string;
  request_id: string;
  timeout_ms: number | null;
  session_id: string | null;
  attempt: number;
  /** The W3C trace context of the attempt's span, when the runtime traces (OpenTelemetry). */
  traceparent?: string;
}

/**
 * Runs a call somewhere else and returns the tool's output (or a promise of
 * it); a failure is thrown. `signal` is aborted when the engine gives up on
 * the call (timeout, proposal abort), so a transport can forward it.
 */
export type ToolCaller = (call: ToolCall, signal: AbortSignal) => unknown;

export function toolCallOf(tool: string, params: JsonObject, ctx: ToolCallContext): ToolCall {
  const call: ToolCall = {
    tool,
    params,
    action_id: ctx.action_id,
    request_id: ctx.request_id,
    timeout_ms: ctx.timeout_ms,
    session_id: ctx.session_id,
    attempt: ctx.attempt,
  };
  if (ctx.traceparent !== undefined) call.traceparent = ctx.traceparent;
  return call;
}

/**
 * The output an answer carries. `{"error": …}` (a string, or any JSON value
 * shown as JSON) throws: a `TerminalToolError` with `"terminal": true`, else
 * a `tool_error`. The engine classifies either like any thrown tool error.
 */
export function readToolAnswer(answer: JsonValue): JsonValue {
  const raw = isJsonObject(answer) ? getOwn(answer, "error") : undefined;
  if (raw === undefined || raw === null) return answer;
  const message = typeof raw === "string" ? raw : JSON.stringify(raw);
  if (getOwn(answer as JsonObject, "terminal") === true) throw new TerminalToolError(message);
  throw new CarError("tool_error", message);
}

/**
 * The seeds' single JSON-string callback as a `ToolCaller`: the call goes
 * out as one JSON string, the answer string is parsed (anything that is not
 * JSON is a validation failure) and read with `readToolAnswer`.
 */
export function jsonCallbackCaller(callback: ToolCallback, maxBytes: number): ToolCaller {
  const read = (text: unknown): JsonValue => {
    const answer = parseJsonOutput(text, maxBytes);
    if (answer instanceof ActionFailure) throw answer;
    return readToolAnswer(answer);
  };
  return (call, signal) => {
    const answer = callback(JSON.stringify(call), signal);
    return typeof answer === "string" ? read(answer) : Promise.resolve(answer).then(read);
  };
}
