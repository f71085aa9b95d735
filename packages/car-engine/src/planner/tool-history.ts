/**
 * What the audit log says about each tool: how often its calls succeeded and
 * failed, and how long they took. The planner's scores read this instead of
 * guessing, so a tool that keeps failing ranks the plans that lean on it
 * lower the next time round.
 */
import type { CarEvent } from "../events/event.ts";
import { EVENT_KINDS } from "../events/event.ts";
import type { EventLog } from "../events/event-log.ts";

export interface ToolStats {
  succeeded: number;
  failed: number;
  /** Mean duration of the calls whose start and end are both in the window; undefined when none are. */
  mean_duration_ms: number | undefined;
}

/** Tool name → its record. A tool the log never saw is absent. */
export type ToolHistory = ReadonlyMap<string, ToolStats>;

/** How many of the most recent outcome events `toolHistory` reads from a log by default. */
export const DEFAULT_HISTORY_WINDOW = 10_000;

const OUTCOME_KINDS = [EVENT_KINDS.actionStarted, EVENT_KINDS.actionSucceeded, EVENT_KINDS.actionFailed];

/**
 * Builds per-tool statistics from a log (its most recent `window` start and
 * outcome events) or from events already in hand. Events without a `tool`
 * (state writes, assertions) are ignored.
 */
export function toolHistory(source: EventLog | readonly CarEvent[], window: number = DEFAULT_HISTORY_WINDOW): ToolHistory {
  const events = isEventLog(source) ? source.query({ kinds: OUTCOME_KINDS, order: "desc", limit: window }).reverse() : source;
  const started = new Map<string, number>();
  const acc = new Map<string, { succeeded: number; failed: number; total: number; timed: number }>();
  for (const event of events) {
    const tool = event.data["tool"];
    if (typeof tool !== "string" || event.action_id === undefined) continue;
    const callKey = `${event.proposal_id ?? ""}\u0000${event.action_id}`;
    if (event.kind === EVENT_KINDS.actionStarted) {
      if (!started.has(callKey)) started.set(callKey, Date.parse(event.timestamp));
      continue;
    }
    if (event.kind !== EVENT_KINDS.actionSucceeded && event.kind !== EVENT_KINDS.actionFailed) continue;
    let entry = acc.get(tool);
    if (entry === undefined) acc.set(tool, (entry = { succeeded: 0, failed: 0, total: 0, timed: 0 }));
    if (event.kind === EVENT_KINDS.actionSucceeded) entry.succeeded++;
    else entry.failed++;
    const start = started.get(callKey);
    const end = Date.parse(event.timestamp);
    if (start !== undefined && Number.isFinite(start) && Number.isFinite(end)) {
      entry.total += Math.max(0, end - start);
      entry.timed++;
      started.delete(callKey);
    }
  }
  const history = new Map<string, ToolStats>();
  for (const [tool, e] of acc) {
    history.set(tool, { succeeded: e.succeeded, failed: e.failed, mean_duration_ms: e.timed > 0 ? e.total / e.timed : undefined });
  }
  return history;
}

function isEventLog(source: EventLog | readonly CarEvent[]): source is EventLog {
  return !Array.isArray(source);
}
