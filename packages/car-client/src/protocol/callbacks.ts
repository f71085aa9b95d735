/**
 * What the server sends the client: requests it waits on (`tools.execute`,
 * `multi.run_agent`, `planner.propose`) and notifications (`tools.cancel`,
 * `tools.stream.event`). A client answers a request under its own id.
 */
import { callback } from "./declaration.ts";
import { anyObject, anyValue, integer, ir, object, optional, string } from "./schema.ts";

export const serverRequests = {
  "tools.execute": callback({
    summary: "Run a tool the session registered: answer its output, or an error (`data.terminal: true` for a terminal failure).",
    params: object(
      {
        tool: string,
        params: anyObject,
        action_id: string,
        request_id: string,
        attempt: integer,
        timeout_ms: integer,
        session_id: string,
        traceparent: string,
      },
      ["tool", "params", "action_id", "request_id", "attempt"],
    ),
    result: anyValue,
  }),
  "multi.run_agent": callback({
    summary: "Run one agent of a multi-agent pattern: answer its AgentOutput.",
    params: object(
      {
        spec: ir("AgentSpec"),
        task: string,
        run_id: string,
        call_id: string,
        request_id: string,
        step: anyValue,
        original_task: string,
        inputs: anyValue,
        session_id: string,
        timeout_ms: integer,
      },
      ["spec", "task", "request_id"],
    ),
    result: ir("AgentOutput"),
  }),
  "planner.propose": callback({
    summary:
      "Propose plans for `planner.run`'s task (the server verifies, scores and runs the best), or a replacement for a failed run (`replan.set_config`: `failed_proposal_id` and `failures` say what failed; answer null to stop).",
    params: object(
      {
        task: string,
        request_id: string,
        session_id: string,
        /** A replan request: the run that failed, and each failed (or rejected) action's tool, error and parameters. */
        failed_proposal_id: optional("string"),
        failures: {
          type: ["array", "null"],
          items: object({ action_id: string, status: string, tool: { type: ["string", "null"] }, error: { type: ["string", "null"] }, parameters: anyObject }, [
            "action_id",
            "status",
          ]),
        },
      },
      ["task", "request_id"],
    ),
    result: anyValue,
  }),
} as const;

export const serverNotifications = {
  "tools.cancel": callback({
    summary: "The server gave up on a `tools.execute` call (its deadline, or the proposal was cancelled).",
    params: object({ request_id: string, action_id: string, reason: optional("string") }, ["request_id"]),
  }),
  "tools.stream.event": callback({
    summary: "A chunk from a detached tool call (after `tools.stream.subscribe`).",
    params: ir("ToolStreamEvent"),
  }),
} as const;
