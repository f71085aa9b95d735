/** Test-only: a tool-call `Action` with every defaulted field filled, as the IR's parser would. */
import type { Action, JsonObject } from "@car/ir";

export function toolAction(tool: string, parameters: JsonObject = {}, id = "a1"): Action {
  return {
    id,
    type: "tool_call",
    tool,
    parameters,
    preconditions: [],
    expected_effects: {},
    dependencies: [],
    state_dependencies: [],
    read_set: [],
    write_set: [],
    assumptions: [],
    invocation_mode: "one_shot",
    reversibility: "irreversible",
    idempotent: false,
    max_retries: 3,
    failure_behavior: "abort",
    metadata: {},
  };
}
