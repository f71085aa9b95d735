/**
 * `registerToolSchema`'s argument as node-api.md documents it. Two readings
 * differ from `Runtime.registerTool`'s: `"returns": null` — the reference's
 * own example — means the tool declares no result schema (the same as
 * leaving it out), and `source` is assigned, not claimed: the schema
 * registers as `user_defined`, so any other `source` is refused rather than
 * believed or silently replaced.
 */
import { CarError, isJsonObject, type ToolSchemaInput } from "@car/ir";
import { jsonArg } from "./json-args.ts";

export function toolSchemaArg(schemaJson: unknown): ToolSchemaInput {
  const raw = jsonArg(schemaJson, "schemaJson");
  if (!isJsonObject(raw)) throw new CarError("invalid_params", "schemaJson must be a JSON object (a ToolSchema)");
  const { returns, source, ...rest } = raw;
  if (source !== undefined && source !== "user_defined")
    throw new CarError("invalid_params", `schemaJson.source: a registered schema is user_defined; it cannot claim ${JSON.stringify(source)}`);
  const schema: Record<string, unknown> = { ...rest, source: "user_defined" };
  if (returns !== undefined && returns !== null) schema["returns"] = returns;
  return schema as unknown as ToolSchemaInput;
}
