/**
 * `runs.*`: agent run tracing. A run is one `runs.start` / `runs.complete`
 * bracket around an agent loop; reads need the owning agent or the host
 * role, writes the owning agent (the server checks the binding, never a
 * caller-supplied id).
 */
import { method } from "./declaration.ts";
import { anyObject, boolean, integer, listOf, object, optional, string } from "./schema.ts";

const status = { enum: ["in_progress", "completed", "incomplete", "cancelled"] } as const;
const summary = object({ run_id: string, agent_id: string, intent: string, started_at: string, ended_at: string, status, turn_count: integer }, [
  "run_id",
  "agent_id",
  "intent",
  "started_at",
  "status",
  "turn_count",
]);
/** A batch appended, or dropped (`dropped` says why: run_not_found, turn_too_large, …). */
const appended = object({ run_id: string, base_index: integer, count: integer, ok: boolean, dropped: string }, ["run_id", "base_index", "count", "ok"]);
/** A page's size under runs.pagination.v1: 1 to 500 (ignored by a connection that did not negotiate it). */
const pageLimit = { type: ["integer", "null"], minimum: 1, maximum: 500 } as const;
/** Where the next page starts; null on the last page. */
const nextIndex = { type: ["integer", "null"] } as const;
const toolCall = object({ id: string, name: string, arguments: {} }, ["id", "name", "arguments"]);

export const runMethods = {
  "runs.start": method({
    role: "agent",
    summary: "Opens a run for the connection's agent (or one named by agent_name); an idempotency_key makes a retry answer the same run.",
    params: object(
      {
        intent: string,
        agent_id: optional("string"),
        agent_name: optional("string"),
        outcome_description: optional("string"),
        idempotency_key: optional("string"),
      },
      ["intent"],
    ),
    result: object({ run_id: string, agent_id: string }, ["run_id", "agent_id"]),
  }),
  "runs.complete": method({
    role: "agent",
    summary: "Ends a run with its AgentOutcome `{ status, summary, evidence, metrics, timestamp }`.",
    params: object({ run_id: string, outcome: object({ status: string }, ["status"]) }, ["run_id", "outcome"]),
    result: object({ run_id: string, ok: { const: true } }, ["run_id", "ok"]),
  }),
  "runs.record_turns": method({
    role: "agent",
    summary: "Appends action turns the agent narrates to its run.",
    // Checked by the handler, whose refusal quotes the documented shape `{ run_id, turns: [RunTurn] }` (1 to 256 turns of these fields).
    // Each turn: { prompt?, tool?, parameters?, output?, verifier_verdict?, policy_rejected?, cli_outcome? }.
    params: object({ run_id: {}, turns: {} }),
    result: appended,
  }),
  "runs.record_model_turn": method({
    role: "agent",
    summary: "Appends one model turn (its text, requested tool calls, usage and duration; secrets redacted).",
    params: object(
      {
        run_id: string,
        turn_index: integer,
        assistant_text: string,
        model_id: string,
        requested_tool_calls: listOf(toolCall),
        token_usage: optional("object"),
        duration_ms: { type: "number" },
      },
      ["run_id", "turn_index", "assistant_text", "model_id", "requested_tool_calls", "token_usage", "duration_ms"],
    ),
    result: appended,
  }),
  "runs.subscribe": method({
    role: "agent",
    summary: "Streams a run's new records as `runs.trace.event` notifications; answers the turns so far.",
    // With runs.pagination.v1 negotiated, cursor and limit are required (checked by the server against the capability).
    params: object({ run_id: string, cursor: optional("integer"), limit: pageLimit }, ["run_id"]),
    result: object({ run_id: string, agent_id: string, turns_so_far: listOf(anyObject), cursor: integer, status, next_cursor: nextIndex }, [
      "run_id",
      "agent_id",
      "turns_so_far",
      "cursor",
      "status",
    ]),
  }),
  "runs.unsubscribe": method({
    role: "agent",
    summary: "Stops a run's stream on this connection.",
    params: object({ run_id: string }, ["run_id"]),
    result: object({ run_id: string, removed: boolean }, ["run_id", "removed"]),
  }),
  "runs.list": method({
    role: "agent",
    summary: "An agent's runs (the agent the connection acts for, or any with the host role).",
    // With runs.pagination.v1 negotiated, cursor ("" first, then a page's next_cursor) and limit are required.
    params: object({ agent_id: string, cursor: optional("string"), limit: pageLimit }, ["agent_id"]),
    result: object({ agent_id: string, runs: listOf(summary), next_cursor: { type: ["string", "null"] } }, ["agent_id", "runs"]),
  }),
  "runs.get_trace": method({
    role: "agent",
    summary: "A run's records from `cursor` on, or `{ not_found: true }`.",
    // With runs.pagination.v1 negotiated, cursor and limit are required.
    params: object({ run_id: string, cursor: optional("integer"), limit: pageLimit }, ["run_id"]),
    result: object({ run_id: string, agent_id: string, records: listOf(anyObject), cursor: integer, next_cursor: nextIndex, not_found: { const: true } }, [
      "run_id",
    ]),
  }),
  "runs.resume": method({
    role: "agent",
    summary: "Takes over an in-progress run whose producer left (needs runs.resume.v1 negotiated).",
    params: object({ run_id: string }, ["run_id"]),
    result: object({ run_id: string, agent_id: string, client_id: string, resumed_from_client_id: string }, [
      "run_id",
      "agent_id",
      "client_id",
      "resumed_from_client_id",
    ]),
  }),
  "runs.cancel": method({
    role: "agent",
    summary: "Cancels a run (its owner, or the host role for an orphan); answers a digest-sealed receipt (needs runs.cancel.v1).",
    params: object({ run_id: string, idempotency_key: string, reason: string }, ["run_id", "idempotency_key", "reason"]),
    result: object(
      {
        receipt_version: { const: 1 },
        run_id: string,
        idempotency_key: string,
        reason_digest: string,
        principal: string,
        status: { enum: ["cancelled_confirmed", "already_terminal"] },
        terminal_digest: { type: ["string", "null"] },
        action_id: { type: "null" },
        request_id: { type: "null" },
        receipt_digest: string,
      },
      ["receipt_version", "run_id", "idempotency_key", "reason_digest", "principal", "status", "terminal_digest", "receipt_digest"],
    ),
  }),
} as const;
