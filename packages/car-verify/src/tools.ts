/**
 * The caller's tool registry as the static gate sees it (`gate.ts`). Only
 * used when the caller supplies one; a schemaless entry (a bare name) checks
 * existence only. Schemas compile on first use, once per tool.
 */
import type { JsonObject, SchemaValidator, ToolSchema } from "@car/ir";
import { CarError, compileSchema, isJsonObject } from "@car/ir";
import type { GateTool, GateTools } from "./gate.ts";

/** A registry entry: a tool name, or a ToolSchema (only `name` is required). */
export type ToolSpec = string | (Pick<ToolSchema, "name"> & Partial<ToolSchema>);

class SpecTool implements GateTool {
  readonly #schema: JsonObject | undefined;
  #validate: SchemaValidator | undefined;

  constructor(schema: JsonObject | undefined) {
    this.#schema = schema;
  }

  get validateParams(): SchemaValidator | undefined {
    if (this.#schema === undefined) return undefined;
    return (this.#validate ??= compileSchema(this.#schema));
  }
}

export function toolRegistry(tools: readonly ToolSpec[]): GateTools {
  if (!Array.isArray(tools)) throw new CarError("invalid_params", "invalid tools: must be an array of tool names or ToolSchemas");
  const registry = new Map<string, SpecTool>();
  for (const [i, tool] of tools.entries()) {
    if (typeof tool === "string") {
      if (!registry.has(tool)) registry.set(tool, new SpecTool(undefined));
    } else if (typeof tool === "object" && tool !== null && typeof tool.name === "string") {
      // A later schema for the same name wins, as a re-registration would.
      registry.set(tool.name, new SpecTool(isJsonObject(tool.parameters) ? tool.parameters : undefined));
    } else {
      throw new CarError("invalid_params", `invalid tools: [${i}] must be a tool name or a ToolSchema with a string name`);
    }
  }
  return registry;
}
