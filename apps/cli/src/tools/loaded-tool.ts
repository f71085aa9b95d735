/** A tool as `car run` registers it: a name, an optional schema, and the code that runs it. */
import type { ToolSchema } from "@car/ir";
import type { ToolCallContext, ToolHandler } from "@car/engine";

/** The engine's per-call context, under the name this package has always exported. */
export type ToolContext = ToolCallContext;

export interface LoadedTool {
  name: string;
  schema: ToolSchema | undefined;
  handler: ToolHandler;
}
