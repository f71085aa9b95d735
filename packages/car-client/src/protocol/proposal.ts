/** Running and analysing proposals: `proposal.submit`, `verify`, `verify.monte_carlo`, `simulate`, `optimize`, `equivalent`, `permission.classify`. */
import { method } from "./declaration.ts";
import { anyObject, anyValue, boolean, integer, ir, listOf, number, object, oneOf, optional, optionalListOf, string, stringList } from "./schema.ts";

/** The proposal is checked by the IR's parser, which locates each problem; the schema only names it. */
const proposal = ir("ActionProposalInput");
/** A sample's summary: `verify.monte_carlo`'s tool calls and actions run per trial. */
const distribution = object({ mean: number, min: number, p50: number, p95: number, max: number }, ["mean", "min", "p50", "p95", "max"]);

export const proposalMethods = {
  "proposal.submit": method({
    role: "agent",
    summary: "Executes a proposal; each tool_call is a `tools.execute` request back to this client.",
    params: object(
      {
        proposal,
        rollback: oneOf(["state", "compensate"]),
        /** A policy session of this connection (`session.policy.open`) whose rules apply to this run too. */
        session_id: optional("string"),
        /** A RuntimeScope: only `tenantId` (or `tenant_id`) is enforced; any other field is refused. */
        scope: { anyOf: [object({ tenantId: optional("string"), tenant_id: optional("string") }), { type: "null" }] },
        /** Wait up to this long (1 ms to a day) for the approvals the proposal needs instead of being rejected. */
        wait_for_approval_ms: optional("integer"),
        /** A field the IR does not name is an invalid_proposal error instead of a kept extra. */
        strict: optional("boolean"),
        /** The skill that drove these actions (in the scope's tenant's or the global skills): its deployment_tier caps the standing tier. */
        skill: optional("string"),
      },
      ["proposal"],
    ),
    result: ir("ProposalResult"),
  }),
  verify: method({
    role: "agent",
    summary: "Static verification, with the session's trace rules checked against the orders the plan permits.",
    params: object({ proposal, initial_state: optional("object"), state: optional("object"), max_actions: optional("number"), strict: optional("boolean") }, [
      "proposal",
    ]),
    result: ir("VerificationResult"),
  }),
  "verify.monte_carlo": method({
    role: "agent",
    summary: "Samples the proposal's rollouts with tools allowed to fail (seeded, reproducible): how often it works and what breaks first.",
    params: object(
      {
        proposal,
        initial_state: optional("object"),
        /** Per-tool success rates (clamped to 0..1); merged over the rates the session's log records. */
        tool_success_rates: { type: ["object", "null"], additionalProperties: { type: "number" } },
        /** A GoalCondition: `{state_predicate}`, `{all_of}`, `{any_of}`; conditions a simulation cannot decide fail closed. */
        goal: anyValue,
        /** Days of the log the rates are derived from (default 30, 0: none). */
        rate_window_days: { type: ["integer", "null"], minimum: 0, maximum: 3650 },
        config: {
          type: ["object", "null"],
          properties: { trials: optional("integer"), seed: optional("integer"), default_success_rate: optional("number"), retry_attempts: optional("integer") },
          additionalProperties: false,
        },
      },
      ["proposal"],
    ),
    result: object(
      {
        trials: integer,
        seed: integer,
        p_goal_reached: { type: ["number", "null"] },
        goal_underivable_conditions: stringList,
        p_all_effects_landed: number,
        tool_calls: distribution,
        actions_executed: distribution,
        state_distribution: listOf(
          object({ key: string, p_present: number, values: listOf(object({ value: anyValue, probability: number }, ["value", "probability"])) }, [
            "key",
            "p_present",
            "values",
          ]),
        ),
        action_outcomes: listOf(
          object({ action_id: string, p_rejected: number, p_failed: number, p_effects_landed: number, mean_blast_radius: number }, [
            "action_id",
            "p_rejected",
            "p_failed",
            "p_effects_landed",
            "mean_blast_radius",
          ]),
        ),
        rate_provenance: object(
          {
            window_days: integer,
            trajectories_available: boolean,
            overridden_by_caller: stringList,
            tools: listOf(
              object(
                {
                  tool: string,
                  rate: number,
                  source: { enum: ["caller", "trajectories", "default"] },
                  succeeded: { type: ["integer", "null"] },
                  dispatched: { type: ["integer", "null"] },
                },
                ["tool", "rate", "source", "succeeded", "dispatched"],
              ),
            ),
          },
          ["window_days", "trajectories_available", "overridden_by_caller", "tools"],
        ),
      },
      [
        "trials",
        "seed",
        "p_goal_reached",
        "goal_underivable_conditions",
        "p_all_effects_landed",
        "tool_calls",
        "actions_executed",
        "state_distribution",
        "action_outcomes",
        "rate_provenance",
      ],
    ),
  }),
  simulate: method({
    role: "agent",
    summary: "The state the proposal would leave, and the actions it would skip.",
    params: object({ proposal, initial_state: optional("object"), state: optional("object") }, ["proposal"]),
    result: object({ state: anyObject, skipped: listOf(anyValue) }, ["state", "skipped"]),
  }),
  optimize: method({
    role: "agent",
    summary: "The proposal rewritten (deduplicated, reordered for parallelism).",
    params: object({ proposal }, ["proposal"]),
    result: ir("ActionProposal"),
  }),
  equivalent: method({
    role: "agent",
    summary: "Whether two proposals leave the same state from the same starting states.",
    params: object({ proposal_a: proposal, proposal_b: proposal, test_states: optionalListOf(anyObject) }, ["proposal_a", "proposal_b"]),
    result: object({ equivalent: boolean, probes: integer, difference: anyObject }, ["equivalent", "probes"]),
  }),
  "permission.classify": method({
    role: "agent",
    summary: "Each action's required tier, reversibility and missing compensation.",
    params: object({ proposal }, ["proposal"]),
    result: object({ classifications: listOf(anyObject), declared_rollback_contract: {} }, ["classifications"]),
  }),
} as const;
