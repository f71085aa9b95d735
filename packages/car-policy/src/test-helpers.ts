/** Test-only: a tool-call `Action` with every defaulted field filled, as the IR's parser would. */
import { toolCall } from "@car/ir";
import type { Action, JsonObject } from "@car/ir";

export function toolAction(tool: string, parameters: JsonObject = {}, id = "a1"): Action {
  return toolCall(tool, parameters, { id });
}
