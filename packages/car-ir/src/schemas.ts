/** The shipped JSON Schemas, one per wire shape (also published as `@car/ir/schemas/<name>.json`). */
import actionProposal from "../schemas/action-proposal.json" with { type: "json" };
import actionResult from "../schemas/action-result.json" with { type: "json" };
import action from "../schemas/action.json" with { type: "json" };
import agentOutput from "../schemas/agent-output.json" with { type: "json" };
import agentSpec from "../schemas/agent-spec.json" with { type: "json" };
import compensation from "../schemas/compensation.json" with { type: "json" };
import costBudget from "../schemas/cost-budget.json" with { type: "json" };
import costSummary from "../schemas/cost-summary.json" with { type: "json" };
import costTarget from "../schemas/cost-target.json" with { type: "json" };
import policyViolation from "../schemas/policy-violation.json" with { type: "json" };
import precondition from "../schemas/precondition.json" with { type: "json" };
import proposalResult from "../schemas/proposal-result.json" with { type: "json" };
import stateAssumption from "../schemas/state-assumption.json" with { type: "json" };
import stateMutation from "../schemas/state-mutation.json" with { type: "json" };
import toolControl from "../schemas/tool-control.json" with { type: "json" };
import toolFailure from "../schemas/tool-failure.json" with { type: "json" };
import toolHandle from "../schemas/tool-handle.json" with { type: "json" };
import toolPollResult from "../schemas/tool-poll-result.json" with { type: "json" };
import toolSchema from "../schemas/tool-schema.json" with { type: "json" };
import toolStatus from "../schemas/tool-status.json" with { type: "json" };
import toolStreamChunk from "../schemas/tool-stream-chunk.json" with { type: "json" };
import toolStreamEvent from "../schemas/tool-stream-event.json" with { type: "json" };
import traceEvent from "../schemas/trace-event.json" with { type: "json" };
import verificationIssue from "../schemas/verification-issue.json" with { type: "json" };
import verificationResult from "../schemas/verification-result.json" with { type: "json" };

export const schemas = {
  actionProposal,
  actionResult,
  action,
  agentOutput,
  agentSpec,
  compensation,
  costBudget,
  costSummary,
  costTarget,
  policyViolation,
  precondition,
  proposalResult,
  stateAssumption,
  stateMutation,
  toolControl,
  toolFailure,
  toolHandle,
  toolPollResult,
  toolSchema,
  toolStatus,
  toolStreamChunk,
  toolStreamEvent,
  traceEvent,
  verificationIssue,
  verificationResult,
} as const;

export type SchemaName = keyof typeof schemas;
