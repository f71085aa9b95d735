/**
 * The adapter interface: the small surface a runtime exposes so RuntimeBench
 * can drive it. One `ConformanceRuntime` is created per scenario (a fresh
 * session: no tools, policies, state or events), used, and destroyed.
 * Tool calls the runtime makes must be answered through the `ToolBehaviours`
 * handed to `registerTools` — that is how declared behaviours reach it.
 */
import type { JsonObject, JsonValue } from "@car/ir";
import type { ScenarioPolicy, ScenarioTool } from "./scenario.ts";
import type { ToolBehaviours } from "./tool-behaviours.ts";

/** A submission refused as a whole (e.g. a malformed proposal): the CAR error code when known. */
export interface SubmitError {
  /** A CAR error code (`invalid_proposal`, …) or, when the transport gives none, its own code as text. */
  code: string;
  message: string;
}

export type SubmitOutcome = { result: JsonValue } | { error: SubmitError };

export interface ConformanceRuntime {
  /** Registers the scenario's tools; every call of one must be answered by `behaviours.play`. */
  registerTools(tools: readonly ScenarioTool[], behaviours: ToolBehaviours): Promise<void>;
  registerPolicy(policy: ScenarioPolicy): Promise<void>;
  setState(state: JsonObject): Promise<void>;
  /** Executes a proposal; a runtime error refusing the whole submission is `{ error }`. */
  submit(proposal: JsonValue): Promise<SubmitOutcome>;
  /** `VerificationResult` (`valid`, `issues`, …); tool checks use the registered tools. */
  verify(proposal: JsonValue, state?: JsonObject): Promise<JsonValue>;
  /** The post-state. */
  simulate(proposal: JsonValue, state?: JsonObject): Promise<JsonObject>;
  equivalent(a: JsonValue, b: JsonValue, testStates?: JsonObject[]): Promise<boolean>;
  /** The optimized proposal. */
  optimize(proposal: JsonValue): Promise<JsonValue>;
  /** A detached tool's `ToolPollResult`, or null. */
  poll(handle: string): Promise<JsonValue>;
  cancel(handle: string): Promise<JsonValue>;
  /** The whole state as an object. */
  getState(): Promise<JsonObject>;
  /** The whole event log, oldest first (`{ kind, proposal_id, action_id?, data, … }`). */
  getEvents(): Promise<JsonObject[]>;
  /**
   * The `approvals` capability (DECISIONS §16), optional: gate this session at
   * `tier` (`read_only`, `sandbox_edit`, `full_access`) from now on — every
   * later proposal is admitted against it as a whole. Called before the first
   * `submit`. A runtime that does not claim `approvals` need not have it.
   */
  setTier?(tier: string): Promise<void>;
  /** The `approvals` capability: record a human approval of this action (its operation, at the tier it needs). */
  approve?(action: JsonValue): Promise<void>;
  /**
   * The `supervision` capability (websocket-core.md § supervision): submit
   * the step's proposal while a separate supervisor, subscribed to this
   * session with the step's filter, answers what it is shown. Resolves with
   * the observation (see `SupervisedSubmitView`).
   */
  supervisedSubmit?(step: SupervisedSubmit): Promise<SupervisedSubmitView>;
  /**
   * The `waiting-approvals` capability (websocket-core.md `permission.*`):
   * submit the step's proposal waiting for its approvals, read the wait from
   * the approval queue, and answer it as the step says.
   */
  waitingSubmit?(step: WaitingSubmit): Promise<WaitingSubmitView>;
  /** The `approvals` capability: the fingerprint the approval ledger keys this action on (what an approver approves). */
  fingerprint?(action: JsonValue): Promise<string>;
}

/** A `supervised_submit` step. */
export interface SupervisedSubmit {
  proposal: JsonValue;
  /** The supervisor's filter (`tools`, `min_reversibility`); the adapter adds this session to it. */
  filter?: JsonObject;
  /**
   * What the supervisor answers: `{ kind, reason? }`. Absent: it disconnects
   * without deciding, and a second supervisor finds the intent still
   * parked and denies it.
   */
  decision?: { kind: string; reason?: string };
}

export interface SupervisedSubmitView {
  outcome: SubmitOutcome;
  /** The `supervision.intent` the supervisor was shown, or null when the proposal was not parked. */
  intent: JsonValue;
  /** The error code (CAR code, else JSON-RPC code as text) of deciding the same intent again afterwards, or null when it was accepted. */
  redecide_error: string | null;
  /** After the first supervisor left without deciding: whether `supervision.pending` on another connection still listed the intent. */
  still_parked?: boolean;
}

/** A `waiting_submit` step. */
export interface WaitingSubmit {
  proposal: JsonValue;
  wait_for_approval_ms: number;
  /** `approve` / `reject` the waiting operation once listed; `none` lets the deadline pass. */
  answer: "approve" | "reject" | "none";
}

export interface WaitingSubmitView {
  outcome: SubmitOutcome;
  /** The wait as the approval queue listed it, or null when nothing waited. */
  pending: JsonValue;
  /** Tool calls made before the answer was given. */
  calls_before_answer: number;
}

/** How the runner gets runtimes: everything `runConformance` needs besides the scenarios. */
export interface RuntimeFactory {
  /** A label for reports. */
  name?: string;
  /**
   * What the runtime declares it supports beyond the required capabilities:
   * optional capabilities by name (`rate-limits`, `detached-tools`,
   * `reference`, …) and abilities scenarios need (`raw_output`: a tool can
   * answer with text that is not JSON — impossible over JSON-RPC). A declared
   * capability is checked and its failures fail the run; an undeclared one is
   * reported as not checked. A scenario needing an undeclared ability is skipped.
   */
  features?: readonly string[];
  createRuntime(): ConformanceRuntime | Promise<ConformanceRuntime>;
  destroyRuntime?(runtime: ConformanceRuntime): void | Promise<void>;
}
