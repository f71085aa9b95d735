/**
 * Adapts the seeds' single JSON-string callback to a call: build the one
 * call JSON, await the answer string, read `{"error": ...}` as a failure
 * (terminal only with `"terminal": true`), and anything unparseable as a
 * validation failure.
 */
import { getOwn, isJsonObject } from "@car/ir";
import type { JsonObject, JsonValue } from "@car/ir";
import type { ToolCallback } from "./handler.ts";
import { ActionFailure, classifyToolMessage, failureFrom } from "./action-failure.ts";
import type { CallContext } from "./call-context.ts";
import { parseJsonOutput } from "./tool-output.ts";

export async function callThroughCallback(dispatch: ToolCallback, tool: string, params: JsonObject, ctx: CallContext, maxBytes: number): Promise<JsonValue> {
  const callJson = JSON.stringify({
    tool,
    params,
    action_id: ctx.action_id,
    request_id: ctx.request_id,
    timeout_ms: ctx.timeout_ms,
    session_id: ctx.session_id,
    attempt: ctx.attempt,
  });
  let answer: unknown;
  try {
    answer = await dispatch(callJson, ctx.signal);
  } catch (error) {
    throw failureFrom(error);
  }
  const output = parseJsonOutput(answer, maxBytes);
  if (output instanceof ActionFailure) throw output;
  const raw = isJsonObject(output) ? getOwn(output, "error") : undefined;
  if (raw !== undefined && raw !== null) {
    const message = typeof raw === "string" ? raw : JSON.stringify(raw);
    throw new ActionFailure(message, classifyToolMessage(message), getOwn(output as JsonObject, "terminal") === true);
  }
  return output;
}
