/**
 * What a producer — a model, a script, a person — may write. Every field the
 * parser defaults is optional, `null` stands for an absent optional field (as
 * serde reads an `Option`), and unknown fields are allowed wherever the wire
 * keeps them (proposal, action, precondition, assumption, compensation,
 * tool schema). The parsed shapes in `types.ts` are what comes back out,
 * every default present; each parsed shape is assignable to its input shape,
 * so anything parsed can be handed in again.
 */
import type {
  ActionType,
  FailureBehavior,
  JsonObject,
  JsonValue,
  PreconditionOperator,
  Reversibility,
  ToolInvocationMode,
  ToolRateLimit,
  ToolSource,
} from "./types.ts";

/** Fields the wire does not define are kept as written and re-emitted. */
interface UnknownFields {
  [field: string]: unknown;
}

/** A precondition as written: only `key` is required (operator `eq`, value `null`, description `""`). */
export interface PreconditionInput extends UnknownFields {
  key: string;
  /** Any string is kept; one outside `PreconditionOperator` evaluates as a failed check. */
  operator?: PreconditionOperator | (string & {});
  value?: JsonValue;
  description?: string;
}

export interface StateAssumptionInput extends UnknownFields {
  key: string;
  expected_value?: JsonValue;
  read_version?: number;
}

export type CompensationInput =
  | (UnknownFields & { type: "tool"; tool: string; parameters?: JsonObject })
  | (UnknownFields & { type: "action_ref"; action_id: string });

/** An action as written: only `type` is required (and `tool` for a `tool_call`, checked when parsed). */
export interface ActionInput extends UnknownFields {
  id?: string;
  type: ActionType;
  tool?: string | null;
  parameters?: JsonObject;
  preconditions?: readonly PreconditionInput[];
  expected_effects?: JsonObject;
  dependencies?: readonly string[];
  state_dependencies?: readonly string[];
  read_set?: readonly string[];
  write_set?: readonly string[];
  assumptions?: readonly StateAssumptionInput[];
  invocation_mode?: ToolInvocationMode;
  reversibility?: Reversibility;
  compensation?: CompensationInput | null;
  idempotent?: boolean;
  max_retries?: number;
  failure_behavior?: FailureBehavior;
  timeout_ms?: number | null;
  metadata?: JsonObject;
}

/** A proposal as written: only `actions` is required. */
export interface ActionProposalInput extends UnknownFields {
  id?: string;
  source?: string;
  /** RFC 3339. */
  timestamp?: string;
  actions: readonly ActionInput[];
  context?: JsonObject;
}

/** A tool schema as written: only `name` is required. */
export interface ToolSchemaInput extends UnknownFields {
  name: string;
  source?: ToolSource;
  description?: string;
  parameters?: JsonObject;
  returns?: JsonObject;
  idempotent?: boolean;
  cache_ttl_secs?: number;
  rate_limit?: ToolRateLimit;
}

/** What every proposal-taking function accepts: input-shaped data (parsed proposals included) or its JSON text. */
export type ProposalInput = ActionProposalInput | string;
