/**
 * The documented defaults of an Action's scalar fields, in one place: the
 * parser fills them into wire input and the factories into code-built
 * actions, and the two must never drift apart.
 */
import type { CostTarget, FailureBehavior, Reversibility, ToolInvocationMode } from "./types.ts";

export const ACTION_DEFAULTS: {
  readonly invocation_mode: ToolInvocationMode;
  readonly reversibility: Reversibility;
  readonly idempotent: boolean;
  readonly max_retries: number;
  readonly failure_behavior: FailureBehavior;
} = { invocation_mode: "one_shot", reversibility: "irreversible", idempotent: false, max_retries: 3, failure_behavior: "abort" };

/** CostTarget's documented defaults (agent-ir-spec.md §CostTarget): the soft target a planner ranks against. */
export const COST_TARGET_DEFAULTS: Readonly<CostTarget> = { target_tool_calls: 5, target_duration_ms: 5000, target_actions: 10, cost_weight: 0.2 };
