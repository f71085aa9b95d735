/**
 * A supervisor's filter (`supervision.subscribe { filter }`): which parked
 * proposals it is shown. Every field narrows (tools: any action calls one
 * of them; sessions: the submitting session or agent is one of them;
 * `min_reversibility`: the proposal is at least this hard to undo — "this
 * risky and worse"). An empty filter matches everything. A reversibility
 * label this server does not know sorts as most severe, so a future
 * variant is over-reported rather than filtered out of view.
 */
import type { JsonObject, JsonValue } from "@car/ir";
import { invalidParams, optionalArray, optionalObject, optionalString, stringArray } from "../params.ts";

export interface IntentFilter {
  tools?: ReadonlySet<string>;
  sessions?: ReadonlySet<string>;
  min_reversibility?: string;
}

const REVERSIBILITY_ORDER: readonly string[] = ["reversible", "compensable", "irreversible"];

/** How severe a reversibility label is; an unknown one is the most severe. */
export function reversibilityRank(label: string): number {
  const i = REVERSIBILITY_ORDER.indexOf(label);
  return i < 0 ? REVERSIBILITY_ORDER.length : i;
}

/** The worse of two labels. */
export function worseReversibility(a: string, b: string): string {
  return reversibilityRank(b) > reversibilityRank(a) ? b : a;
}

export function parseIntentFilter(params: JsonObject): IntentFilter {
  const raw = optionalObject(params, "filter");
  if (raw === undefined) return {};
  for (const key of Object.keys(raw)) {
    if (key !== "tools" && key !== "sessions" && key !== "min_reversibility") {
      throw invalidParams(`filter.${key} is not a filter field (tools, sessions, min_reversibility)`);
    }
  }
  const filter: IntentFilter = {};
  const tools = optionalArray(raw, "tools");
  if (tools !== undefined) filter.tools = new Set(stringArray(tools, "filter.tools"));
  const sessions = optionalArray(raw, "sessions");
  if (sessions !== undefined) filter.sessions = new Set(stringArray(sessions, "filter.sessions"));
  const min = optionalString(raw, "min_reversibility");
  if (min !== undefined) filter.min_reversibility = min;
  return filter;
}

/** What a filter looks at in an intent. */
export interface FilterSubject {
  tools: readonly string[];
  session_id: string | null;
  agent_id: string | undefined;
  reversibility: string;
}

export function filterMatches(filter: IntentFilter, subject: FilterSubject): boolean {
  if (filter.tools !== undefined && !subject.tools.some((t) => filter.tools!.has(t))) return false;
  if (filter.sessions !== undefined) {
    const bySession = subject.session_id !== null && filter.sessions.has(subject.session_id);
    const byAgent = subject.agent_id !== undefined && filter.sessions.has(subject.agent_id);
    if (!bySession && !byAgent) return false;
  }
  if (filter.min_reversibility !== undefined && reversibilityRank(subject.reversibility) < reversibilityRank(filter.min_reversibility)) return false;
  return true;
}

/** The filter as `supervision.subscribe` echoes it. */
export function filterJson(filter: IntentFilter): JsonValue {
  const out: JsonObject = {};
  if (filter.tools !== undefined) out["tools"] = [...filter.tools];
  if (filter.sessions !== undefined) out["sessions"] = [...filter.sessions];
  if (filter.min_reversibility !== undefined) out["min_reversibility"] = filter.min_reversibility;
  return out;
}
