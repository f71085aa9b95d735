/**
 * A supervisor's filter (`supervision.subscribe { filter }`): which parked
 * proposals it is shown. Every field narrows (tools: any action calls one
 * of them; sessions: the submitting session or agent is one of them;
 * `min_reversibility`: the proposal is at least this hard to undo — "this
 * risky and worse"). An empty filter matches everything. A reversibility
 * label this server does not know sorts as most severe, so a future
 * variant is over-reported rather than filtered out of view.
 */
import { CarError, getOwn, isJsonObject, type JsonObject, type JsonValue } from "@car/ir";

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

/**
 * A filter as a supervisor sends it (`supervision.subscribe`'s `filter`):
 * absent or `null` is the empty filter; anything malformed — an unknown
 * field included, so a misspelt one is never silently ignored — is
 * `invalid_params` naming the field.
 */
export function parseIntentFilter(raw: JsonValue | undefined): IntentFilter {
  if (raw === undefined || raw === null) return {};
  if (!isJsonObject(raw)) throw invalidFilter("filter must be an object");
  for (const key of Object.keys(raw)) {
    if (key !== "tools" && key !== "sessions" && key !== "min_reversibility") {
      throw invalidFilter(`filter.${key} is not a filter field (tools, sessions, min_reversibility)`);
    }
  }
  const filter: IntentFilter = {};
  const tools = names(raw, "tools");
  if (tools !== undefined) filter.tools = tools;
  const sessions = names(raw, "sessions");
  if (sessions !== undefined) filter.sessions = sessions;
  const min = getOwn(raw, "min_reversibility");
  if (typeof min === "string") filter.min_reversibility = min;
  else if (min !== undefined && min !== null) throw invalidFilter("filter.min_reversibility must be a string");
  return filter;
}

/** A list of non-empty names, or undefined when the field is absent or `null`. */
function names(raw: JsonObject, key: string): ReadonlySet<string> | undefined {
  const value = getOwn(raw, key);
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw invalidFilter(`filter.${key} must be an array`);
  return new Set(
    value.map((v, i) => {
      if (typeof v !== "string" || v === "") throw invalidFilter(`filter.${key}[${i}] must be a non-empty string`);
      return v;
    }),
  );
}

/** The same wording as every other malformed method param, so a supervisor reads one kind of error. */
function invalidFilter(message: string): CarError {
  return new CarError("invalid_params", `invalid params: ${message}`);
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
