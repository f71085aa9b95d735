export { scoreProposal, costTarget, WARNING_FACTOR, type ScoreOptions, type ProposalScore, type CostEstimate } from "./score.ts";
export { rankProposals, type RankedProposal } from "./rank.ts";
export { toolHistory, DEFAULT_HISTORY_WINDOW, type ToolHistory, type ToolStats } from "./tool-history.ts";
export {
  runPlanLoop,
  DEFAULT_PLAN_ATTEMPTS,
  MAX_PLAN_ATTEMPTS,
  type PlanAttempt,
  type PlanFeedback,
  type PlanLoopOptions,
  type PlanLoopResult,
  type PlanRequest,
  type PlanVerdict,
  type ProposeFn,
} from "./plan-loop.ts";
export {
  executeWithReplan,
  parseReplanConfig,
  DEFAULT_REPLAN_CONFIG,
  MAX_REPLANS,
  MAX_REPLAN_DELAY_MS,
  type ReplanConfig,
  type ReplanFailure,
  type ReplanOptions,
  type ReplanOutcome,
  type ReplanProposer,
} from "./replan.ts";
export { PLANNER_EVENT_KINDS } from "../events/event-kinds.ts";
