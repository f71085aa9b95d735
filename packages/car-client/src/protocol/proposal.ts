/** Running and analysing proposals: `proposal.submit`, `verify`, `simulate`, `optimize`, `equivalent`, `permission.classify`. */
import { method } from "./declaration.ts";
import { anyObject, anyValue, boolean, integer, ir, listOf, object, oneOf, optional, optionalListOf } from "./schema.ts";

/** The proposal is checked by the IR's parser, which locates each problem; the schema only names it. */
const proposal = ir("ActionProposalInput");

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
