/** A tool as `car run` registers it: a name, an optional schema, and the code that runs it. */
import type { JsonObject, ToolSchema } from "@car/ir";

/** The engine's per-tool handler shape, restated so loading tools never imports the engine. */
export interface ToolContext {
  readonly signal: AbortSignal;
  readonly action_id: string;
  readonly request_id: string;
  readonly attempt: number;
  readonly timeout_ms: number | null;
  readonly session_id: string | null;
}

export interface LoadedTool {
  name: string;
  schema: ToolSchema | undefined;
  handler(params: JsonObject, ctx: ToolContext): unknown;
}
