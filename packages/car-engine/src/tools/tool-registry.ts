/**
 * The runtime's tools: each ToolSchema with its `parameters` / `returns`
 * validators compiled once at registration, and an optional handler.
 */
import { CarError, compileSchema, parseToolSchema } from "@car/ir";
import type { SchemaValidator, ToolSchema } from "@car/ir";
import type { ToolHandler } from "./handler.ts";

export interface RegisteredTool {
  readonly schema: ToolSchema;
  readonly handler: ToolHandler | undefined;
  /** `undefined` when the schema accepts any parameters (`{}`), so the hot path can skip validation. */
  readonly validateParams: SchemaValidator | undefined;
  readonly validateReturns: SchemaValidator | undefined;
}

export class ToolRegistry {
  readonly #tools = new Map<string, RegisteredTool>();

  /**
   * Registers (or replaces) a tool. A bare name is a schemaless tool that
   * accepts any parameters. An invalid ToolSchema is `invalid_params`; a
   * schema that does not compile is `invalid_schema`.
   */
  register(schemaOrName: unknown, handler?: ToolHandler): ToolSchema {
    const tool = this.prepare(schemaOrName, handler);
    this.add(tool);
    return tool.schema;
  }

  /** Checks and compiles a tool without registering it (for all-or-nothing batches). */
  prepare(schemaOrName: unknown, handler?: ToolHandler): RegisteredTool {
    const schema = typeof schemaOrName === "string" ? parseToolSchema({ name: schemaOrName }) : parseToolSchema(schemaOrName);
    if (schema.name === "") throw new CarError("invalid_params", "a tool needs a non-empty name");
    if (handler !== undefined && typeof handler !== "function") throw new CarError("invalid_params", `the handler for tool '${schema.name}' is not a function`);
    const validateParams = Object.keys(schema.parameters).length === 0 ? undefined : compileSchema(schema.parameters);
    const validateReturns = schema.returns === undefined ? undefined : compileSchema(schema.returns);
    return { schema, handler, validateParams, validateReturns };
  }

  /** Registers (or replaces) a prepared tool. */
  add(tool: RegisteredTool): void {
    this.#tools.set(tool.schema.name, tool);
  }

  /** Removes a tool; returns how many were removed (0 when none matched, which is not an error). */
  unregister(name: string): number {
    return this.#tools.delete(name) ? 1 : 0;
  }

  get(name: string): RegisteredTool | undefined {
    return this.#tools.get(name);
  }

  /** Every schema, sorted by name, so two listings with no registration between them are identical. */
  list(): ToolSchema[] {
    return [...this.#tools.values()].map((t) => t.schema).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}
