/** What one `car mcp` tool is: its name, description, input schema, hints and the function that answers it. */
import type { JsonObject, JsonValue } from "@car/ir";

/** MCP tool annotations: host UX (may it call without asking?), not a security boundary. */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** A tool that only reads: hosts may call it without asking. */
export const READ_ONLY_ANNOTATIONS: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: JsonObject & { type: "object"; properties: JsonObject };
  /** Other names callers use for an argument (the reference's, older ones) → the name used here. */
  aliases?: Readonly<Record<string, string>>;
  /** Default: read-only. */
  annotations?: ToolAnnotations;
  run(args: JsonObject): JsonValue;
}
