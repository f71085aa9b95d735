/**
 * The runtime's own audit events as the skills loop's trace: every finished
 * tool action becomes a `TraceEvent` (reward 1 for success, 0 for failure)
 * whose episode is its proposal, so `distillSkills` learns from what the
 * runtime actually ran without the caller assembling a trace by hand.
 */
import { getOwn, type TraceEvent } from "@car/ir";
import { EVENT_KINDS, type CarEvent } from "../events/event.ts";

/** Finished tool actions, in log order; `domain` is stamped on each (default `general`). */
export function traceEventsFrom(events: readonly CarEvent[], domain = "general"): TraceEvent[] {
  const trace: TraceEvent[] = [];
  for (const event of events) {
    const succeeded = event.kind === EVENT_KINDS.actionSucceeded;
    if (!succeeded && event.kind !== EVENT_KINDS.actionFailed) continue;
    const tool = getOwn(event.data, "tool");
    if (typeof tool !== "string") continue;
    const data = { episode: event.proposal_id ?? "none", domain };
    trace.push({
      kind: succeeded ? "action_succeeded" : "action_failed",
      ...(event.action_id !== undefined ? { action_id: event.action_id } : {}),
      tool,
      data,
      reward: succeeded ? 1 : 0,
    });
  }
  return trace;
}
