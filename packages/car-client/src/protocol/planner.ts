/** `planner.run`: the client's model proposes (through `planner.propose` requests), the server verifies, scores and runs. */
import { method } from "./declaration.ts";
import { anyObject, ir, listOf, object, optional, string } from "./schema.ts";

export const plannerMethods = {
  "planner.run": method({
    role: "agent",
    summary: "Plans a task with the client's model (up to max_attempts), then runs the best verified proposal.",
    params: object({ task: string, max_attempts: optional("number"), target: optional("object"), propose_timeout_ms: optional("number") }, ["task"]),
    result: object({ run_id: string, outcome: { enum: ["succeeded", "exhausted"] }, attempts: listOf(anyObject), result: ir("ProposalResult") }, [
      "run_id",
      "outcome",
      "attempts",
    ]),
  }),
} as const;
