/**
 * Tool registry findings: a `tool_call` naming a tool the caller did not
 * register, and parameters that fail the registered tool's JSON Schema. Only
 * run when the caller supplies a registry; a schemaless entry (a bare name)
 * checks existence only.
 */
import type { Action, JsonObject, ToolSchema, VerificationIssue } from "@car/ir";
import { CarError, compileSchema, isJsonObject } from "@car/ir";
import type { SchemaValidator } from "@car/ir";
import { issue } from "./issue.ts";

/** A registry entry: a tool name, or a ToolSchema (only `name` is required). */
export type ToolSpec = string | (Pick<ToolSchema, "name"> & Partial<ToolSchema>);

/** Tool name → its parameter schema, `undefined` for a schemaless tool. */
export type ToolRegistry = ReadonlyMap<string, JsonObject | undefined>;

export function toolRegistry(tools: readonly ToolSpec[]): ToolRegistry {
  if (!Array.isArray(tools)) throw new CarError("invalid_params", "invalid tools: must be an array of tool names or ToolSchemas");
  const registry = new Map<string, JsonObject | undefined>();
  for (const [i, tool] of tools.entries()) {
    if (typeof tool === "string") {
      if (!registry.has(tool)) registry.set(tool, undefined);
    } else if (typeof tool === "object" && tool !== null && typeof tool.name === "string") {
      // A later schema for the same name wins, as a re-registration would.
      registry.set(tool.name, isJsonObject(tool.parameters) ? tool.parameters : undefined);
    } else {
      throw new CarError("invalid_params", `invalid tools: [${i}] must be a tool name or a ToolSchema with a string name`);
    }
  }
  return registry;
}

export function toolIssues(actions: readonly Action[], registry: ToolRegistry): VerificationIssue[] {
  const issues: VerificationIssue[] = [];
  const validators = new Map<string, SchemaValidator>();
  for (const action of actions) {
    if (action.type !== "tool_call") continue;
    const tool = action.tool;
    if (tool === undefined || !registry.has(tool)) {
      const message =
        tool === undefined ? `action '${action.id}' is a tool_call that names no tool` : `action '${action.id}' calls tool '${tool}', which is not registered`;
      issues.push(issue(action, "error", message));
      continue;
    }
    const schema = registry.get(tool);
    if (schema === undefined) continue;
    let validate = validators.get(tool);
    if (validate === undefined) {
      validate = compileSchema(schema);
      validators.set(tool, validate);
    }
    const outcome = validate(action.parameters);
    if (outcome.ok) continue;
    for (const error of outcome.errors) {
      issues.push(
        issue(action, "error", `action '${action.id}': parameters of tool '${tool}' fail its schema at '${error.path || "/"}' (schema path ${error.schemaPath}): ${error.message}`),
      );
    }
  }
  return issues;
}
