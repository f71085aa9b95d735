/**
 * Tools from an ES module: one export per tool, either a function
 * `(params, ctx) => output` or `{ schema, handler }` where `schema` is a CAR
 * ToolSchema (its `name` defaults to the export's). A default export that is
 * an object of such entries works too. Anything else exported is an error, so
 * a typo never leaves a tool silently unregistered.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { CarError, isJsonObject, parseToolSchema } from "@car/ir";
import type { LoadedTool } from "./loaded-tool.ts";

export async function loadToolModule(path: string): Promise<LoadedTool[]> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>;
  } catch (err) {
    throw new CarError("invalid_params", `cannot load tools module '${path}': ${(err as Error).message}`);
  }
  const entries: [string, unknown][] = [];
  for (const [name, value] of Object.entries(mod)) {
    if (name === "default" && isPlainObject(value) && typeof value["handler"] !== "function") {
      entries.push(...Object.entries(value));
    } else {
      entries.push([name, value]);
    }
  }
  const tools = entries.map(([name, value]) => toolFromExport(name, value, path));
  if (tools.length === 0) throw new CarError("invalid_params", `tools module '${path}' exports no tools`);
  const seen = new Set<string>();
  for (const t of tools) {
    if (seen.has(t.name)) throw new CarError("invalid_params", `tools module '${path}' defines tool '${t.name}' twice`);
    seen.add(t.name);
  }
  return tools;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function toolFromExport(name: string, value: unknown, path: string): LoadedTool {
  if (typeof value === "function") {
    return { name, schema: undefined, handler: value as LoadedTool["handler"] };
  }
  if (isPlainObject(value) && typeof value["handler"] === "function") {
    const handler = value["handler"] as LoadedTool["handler"];
    if (value["schema"] === undefined) return { name, schema: undefined, handler };
    if (!isJsonObject(value["schema"])) throw new CarError("invalid_params", `tools module '${path}': export '${name}' has a schema that is not an object`);
    try {
      const schema = parseToolSchema({ name, ...value["schema"] });
      return { name: schema.name, schema, handler };
    } catch (err) {
      throw new CarError("invalid_params", `tools module '${path}': export '${name}' has an invalid schema: ${(err as Error).message}`);
    }
  }
  throw new CarError("invalid_params", `tools module '${path}': export '${name}' is neither a function nor { schema, handler }`);
}
