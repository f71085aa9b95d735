/**
 * The scenario format: plain JSON data, one file per capability under
 * `scenarios/`, described by `scenarios/scenario.schema.json`. A scenario
 * sets a runtime up (tools with declared behaviours, policies, state), runs
 * steps against it, and states what must be observed. The runner never needs
 * to know what a scenario is about.
 */
import type { SupervisedSubmit, WaitingSubmit } from "./adapter.ts";
import type { JsonObject, JsonValue } from "@car/ir";

/** Where in the specification the behaviour is stated. */
export interface SpecCitation {
  /** A file of the specification, e.g. `agent-ir-spec.md`. */
  file: string;
  /** The heading (or heading path) in that file. */
  section: string;
}

/**
 * One step of a tool's declared behaviour. Each call consumes the current
 * step `times` times (default 1); the last step repeats for ever.
 */
export interface BehaviourStep {
  /** Wait this long before answering (the call's cancellation ends the wait and the call goes unanswered). */
  sleep_ms?: number;
  /** Sleep the whole `sleep_ms` and answer even after the runtime cancelled the call (a tool that ignores cancellation). */
  ignores_cancel?: true;
  /** Succeed with this JSON output. */
  output?: JsonValue;
  /** Succeed with the call's parameters as the output. */
  echo?: true;
  /** Fail with this message (an ordinary failure unless `terminal`). */
  error?: string;
  /** Mark the failure terminal (no retries; the proposal aborts and rolls back). */
  terminal?: true;
  /** Answer with this exact JSON text (e.g. a string holding a lone surrogate). */
  json_text?: string;
  /** Answer with this text, which is not JSON at all (needs the `raw_output` feature). */
  raw?: string;
  /** How many consecutive calls this step answers (default 1; the last step answers every call after it). */
  times?: number;
}

/** A tool the scenario registers: a ToolSchema plus how it behaves when called. */
export interface ScenarioTool {
  name: string;
  /** Extra ToolSchema fields (`parameters`, `returns`, `idempotent`, `cache_ttl_secs`, `rate_limit`, `description`). */
  schema?: JsonObject;
  /** Default: succeed with `{"ok": true}`. */
  behaviour?: BehaviourStep[];
}

/** A registrable policy (car-spec.md, Policies). */
export interface ScenarioPolicy {
  name: string;
  rule: "deny_tool" | "deny_tool_param" | "require_state";
  target?: string;
  key?: string;
  pattern?: string;
  value?: JsonValue;
}

/** What one step of a scenario does. Exactly one of the operation fields is set. */
export interface ScenarioStep {
  /** Execute a proposal. */
  submit?: JsonValue;
  /** Statically verify a proposal (optionally against `state`). */
  verify?: JsonValue;
  /** Simulate a proposal from `state` (default `{}`). */
  simulate?: JsonValue;
  /** Compare two proposals over `test_states` (the runtime's defaults when absent). */
  equivalent?: { a: JsonValue; b: JsonValue; test_states?: JsonObject[] };
  /** Optimize a proposal. */
  optimize?: JsonValue;
  /** Poll a detached tool; `handle_of` names the action whose output carries the handle. */
  poll?: { handle_of: string; until_terminal?: boolean };
  /** Cancel a detached tool. */
  cancel?: { handle_of: string };
  /** Write state directly between steps. */
  set_state?: JsonObject;
  /** Gate the session at this permission tier (the `approvals` capability, DECISIONS §16). */
  set_tier?: string;
  /** Record a human approval of this action (the `approvals` capability). */
  approve?: JsonValue;
  /** Submit while a supervisor answers (the `supervision` capability). */
  supervised_submit?: SupervisedSubmit;
  /** Submit waiting for approvals, then answer the wait (the `waiting-approvals` capability). */
  waiting_submit?: WaitingSubmit;
  /**
   * The `approvals` capability: ask the runtime for the fingerprint its approval ledger keys `action` on, and
   * whether the last submit's error for action `named_in` names it (DECISIONS §16: the rejection names each
   * offending action's fingerprint). Observed as `{ fingerprint, named }`.
   */
  fingerprint?: { action: JsonValue; named_in: string };
  /** Wait before the next step (lets a rate-limit window or a cache TTL lapse). */
  wait_ms?: number;
  /** The state `verify` / `simulate` start from; on an `optimize` step, the state the optimized proposal is simulated from (its view gains `simulated`). */
  state?: JsonObject;
  /** What must be observed for this step (matched with the rules in `match.ts`). */
  expect?: JsonValue;
}

/** Expectations checked after the last step. */
export interface FinalExpectations {
  /** The whole state, exactly (values are matchers). */
  state?: JsonObject;
  /** Keys that must hold these values (others may exist). */
  state_includes?: JsonObject;
  /** Keys that must be absent. */
  state_absent?: string[];
  /** Each pattern must match at least one event of the log. */
  events?: JsonObject[];
  /** No event may match any of these patterns. */
  events_absent?: JsonObject[];
  /** None of these strings may appear anywhere in the JSON of an event (of these kinds, or any kind). */
  event_text_absent?: { kinds?: string[]; text: string[] };
  /** Tool calls the runtime made: counts per tool and patterns every call must satisfy / some call must match. */
  calls?: {
    count?: Record<string, number>;
    total?: number;
    some?: JsonObject[];
    none?: JsonObject[];
    every?: JsonObject;
  };
  /** `[a, b]`: the call for action `a` was answered before the call for action `b` started. */
  happens_before?: [string, string][];
  /** `[a, b]`: the calls for `a` and `b` were in flight at the same time. */
  overlapping?: [string, string][];
  /** `[a, b, ms]`: the first call for `b` started at least `ms` after the first call for `a` started. */
  min_gap_ms?: [string, string, number][];
}

export interface Scenario {
  /** Unique across the suite: `<capability>.<slug>`. */
  id: string;
  title: string;
  spec: SpecCitation;
  /** Why the expectation follows from the spec, where it is not obvious. */
  notes?: string;
  /** Adapter features the scenario needs; skipped (not failed) on a runtime without them. */
  requires?: string[];
  tools?: ScenarioTool[];
  policies?: ScenarioPolicy[];
  initial_state?: JsonObject;
  steps: ScenarioStep[];
  expect?: FinalExpectations;
}

/** One capability: a file of scenarios. */
export interface CapabilityFile {
  capability: string;
  title: string;
  /** A required capability must pass for a runtime to be CAR-compatible. */
  required: boolean;
  description?: string;
  scenarios: Scenario[];
}
