/**
 * The caller's tool registry as the static gate sees it (`gate.ts`). Only
 * used when the caller supplies one; a schemaless entry (a bare name) checks
 * existence only. Schemas compile on first use, once per tool.
 */
import type { JsonObject, SchemaValidator, ToolSchema } from "@car/ir";
import { compileSchema, isJsonObject } from "@car/ir";
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
  const registry = new Map<string, SpecTool>();
  for (const tool of tools) {
    if (typeof tool === "string") {
      if (!registry.has(tool)) registry.set(tool, new SpecTool(undefined));
    } else {
      // A later schema for the same name wins, as a re-registration would.
      registry.set(tool.name, new SpecTool(isJsonObject(tool.parameters) ? tool.parameters : undefined));
    }
  }
  return registry;
}
