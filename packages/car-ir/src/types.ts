/**
 * The Agent IR wire format as TypeScript types. Field names are the wire's
 * snake_case names and enum members are the wire's strings: these types ARE
 * the JSON, with no mapping layer in between. These are the *parsed* shapes,
 * every default present; what a producer may write is in `input-types.ts`.
 * The shapes a producer writes are `type` aliases, not interfaces, so a parsed
 * value is assignable to its input type (an interface has no implicit index
 * signature, and the input types allow unknown fields).
 */

export type JsonPrimitive = null | boolean | number | string;
export type JsonValue = JsonPrimitive | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export type ActionType = "tool_call" | "state_write" | "state_read" | "assertion";
export type ToolInvocationMode = "one_shot" | "streaming" | "long_running";
export type Reversibility = "reversible" | "compensable" | "irreversible";
export type FailureBehavior = "abort" | "retry" | "skip";
export type ActionStatus = "proposed" | "validated" | "rejected" | "executing" | "succeeded" | "failed" | "skipped";

/** The operators the spec defines. Any other string is kept and evaluates as a failed check. */
export type PreconditionOperator = "eq" | "neq" | "gt" | "lt" | "gte" | "lte" | "exists" | "not_exists" | "contains";

export type Precondition = {
  key: string;
  /** A `PreconditionOperator`; unknown operators round-trip and fail when evaluated. */
  operator: string;
  value: JsonValue;
  description: string;
};

export type StateAssumption = {
  key: string;
  expected_value?: JsonValue;
  read_version?: number;
};

export type Compensation = { type: "tool"; tool: string; parameters: JsonObject } | { type: "action_ref"; action_id: string };

export type Action = {
  id: string;
  type: ActionType;
  tool?: string;
  parameters: Readonly<JsonObject>;
  preconditions: readonly Precondition[];
  expected_effects: Readonly<JsonObject>;
  /** Explicit edges by action id (car-spec.md). */
  dependencies: readonly string[];
  /** State keys read; ordered after the latest earlier-declared writer (agent-ir-spec.md). */
  state_dependencies: readonly string[];
  read_set: readonly string[];
  write_set: readonly string[];
  assumptions: readonly StateAssumption[];
  invocation_mode: ToolInvocationMode;
  reversibility: Reversibility;
  compensation?: Compensation;
  idempotent: boolean;
  max_retries: number;
  failure_behavior: FailureBehavior;
  timeout_ms?: number;
  metadata: Readonly<JsonObject>;
};

export type ActionProposal = {
  id: string;
  source: string;
  /** RFC 3339. */
  timestamp: string;
  actions: Action[];
  context: JsonObject;
};

export type ToolFailureClassification = "ordinary" | "terminal";

export interface ToolFailure {
  message: string;
  classification: ToolFailureClassification;
}

export type ToolSource = "builtin" | "user_defined" | "subprocess" | "mcp";

export type ToolRateLimit = {
  max_calls: number;
  interval_secs: number;
};

export type ToolSchema = {
  name: string;
  source: ToolSource;
  description: string;
  parameters: JsonObject;
  returns?: JsonObject;
  idempotent: boolean;
  cache_ttl_secs?: number;
  rate_limit?: ToolRateLimit;
};

export interface CostSummary {
  tool_calls: number;
  actions_executed: number;
  actions_rejected: number;
  actions_skipped: number;
  total_duration_ms: number;
  retries: number;
}

/** Soft scoring target for ranking candidate proposals. */
export interface CostTarget {
  target_tool_calls: number;
  target_duration_ms: number;
  target_actions: number;
  cost_weight: number;
}

/** Hard limits; a proposal over budget is rejected at admission, and at run time the rest are skipped. */
export interface CostBudget {
  max_actions?: number;
  max_tool_calls?: number;
  max_duration_ms?: number;
}

export type StateMutation = { op: "set"; value: JsonValue } | { op: "delete" };

export interface ActionResult {
  action_id: string;
  status: ActionStatus;
  output: JsonValue;
  error: string | null;
  state_changes: Record<string, StateMutation>;
  duration_ms: number;
  timestamp: string;
  /** Present (and true) only for a terminal tool failure. */
  terminal?: true;
  /** Present (and true) only when the enclosing state transaction was restored. */
  rolled_back?: true;
  /** Present (and true) only when a rollback ran this action's compensation and it succeeded. */
  compensated?: true;
  /** Present only when a rollback ran this action's compensation and it failed (or was cut short): why. */
  compensation_error?: string;
}

export interface ProposalResult {
  proposal_id: string;
  results: ActionResult[];
  cost: CostSummary;
}

export type Severity = "error" | "warning" | "info";
export type EvidenceTier = "decision_procedure" | "heuristic" | "sampled";

export interface VerificationIssue {
  action_id: string | null;
  severity: Severity;
  message: string;
  tier: EvidenceTier;
}

export interface VerificationResult {
  valid: boolean;
  issues: VerificationIssue[];
  simulated_state: JsonObject;
  execution_levels: string[][];
  conflicts: [string, string, string][];
  /** Whether an abort could undo everything that ran (an addition to the seeds' shape; absent from older producers). */
  rollback_contract?: RollbackReport;
  /** The verifier's declared scope: what each check establishes and cannot, and a 0..1 coverage (absent from older producers). */
  evidence?: VerificationEvidence;
}

/** One check of `verify`: whether it ran, what a pass establishes and does not, and how many findings it made. */
export interface CheckRecord {
  name: string;
  ran: boolean;
  verifies: string;
  cannot_verify: string;
  findings: number;
  tier: EvidenceTier;
}

/** `verify`'s `evidence`: its checks, the assumptions they rest on, what none examined, and coverage (not a probability of success). */
export interface VerificationEvidence {
  checks: CheckRecord[];
  assumptions: string[];
  untested_regions: string[];
  residual_risks: string[];
  confidence: number;
}

/** `verify`'s answer to "if this proposal aborts, can everything it did be undone?". */
export interface RollbackReport {
  /** The worst reversibility declared by an action that runs forward (`rollbackContract`). */
  declared: Reversibility;
  /** True when every forward action is `reversible` or `compensable` with a runnable compensation. */
  fully_undoable: boolean;
  /** The forward actions an abort would leave done, and why. */
  not_undoable: { action_id: string; reason: UndoGap }[];
}

/** Why an action that ran cannot be undone by a rollback with compensation. */
export type UndoGap = "irreversible" | "missing_compensation" | "broken_compensation";

export interface PolicyViolation {
  policy_name: string;
  action_id: string;
  reason: string;
}

// --- Streaming / long-running tools ---------------------------------------

export interface ToolHandle {
  id: string;
}

export type ToolStreamChunk =
  | { kind: "text"; text: string }
  | { kind: "data"; data: JsonValue }
  | { kind: "progress"; fraction: number; message?: string }
  | { kind: "done"; result?: JsonValue }
  | { kind: "error"; message: string };

export type ToolControl = "poll" | "cancel";
export type ToolStatus = "running" | "succeeded" | "failed" | "cancelled";

export interface ToolStreamEvent {
  handle: ToolHandle;
  chunk: ToolStreamChunk;
}

export interface ToolPollResult {
  handle: ToolHandle;
  tool: string;
  action_id: string;
  status: ToolStatus;
  chunks: ToolStreamChunk[];
  result?: JsonValue;
  error?: string;
}

// --- Multi-agent and learning loop ----------------------------------------

export interface AgentSpec {
  name: string;
  system_prompt: string;
  tools: string[];
  max_turns: number;
  metadata: JsonObject;
}

export interface AgentOutput {
  name: string;
  answer: string;
  turns: number;
  /** An integer count, not a list. */
  tool_calls: number;
  duration_ms: number;
  error: string | null;
  /** What the call spent, when the runner reports it: what a multi-agent budget counts. */
  tokens?: AgentTokens | null;
}

/** An agent call's spend as its runner reports it (`AgentOutput.tokens`). */
export interface AgentTokens {
  input_tokens: number;
  output_tokens: number;
  /** Absent when the runner does not price its calls; a `max_cost_usd` budget then cannot count it. */
  cost_usd?: number;
}

export type TraceEventKind = "action_succeeded" | "action_failed";

export interface TraceEvent {
  kind: TraceEventKind;
  action_id?: string;
  tool: string;
  data: JsonObject;
  reward: number;
}
