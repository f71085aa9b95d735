export type { AgentFn, AgentCallContext, AgentInput, MultiOptions, CutOff, CutOffReason, RunSummary } from "./types.ts";
export { parseBudget, BUDGET_LIMIT_KEYS, type BudgetLimits, type BudgetExceeded, type SpendLimit, type Usage } from "./budget.ts";
export { MULTI_EVENT_KINDS } from "./multi-run.ts";
export { runPipeline, type PipelineResult } from "./pipeline.ts";
export { runSwarm, SWARM_MODES, DEFAULT_DEBATE_ROUNDS, type SwarmMode, type SwarmOptions, type SwarmResult } from "./swarm.ts";
export {
  runSupervisor,
  DEFAULT_SUPERVISOR_ROUNDS,
  type SupervisorOptions,
  type SupervisorResult,
  type SupervisorRound,
  type DelegationEntry,
} from "./supervisor.ts";
export { readSupervisorAnswer, type Delegation, type SupervisorDecision } from "./delegation.ts";
export { runMapReduce, type MapReduceResult } from "./map-reduce.ts";
export { runVote, voteKey, type VoteOptions, type VoteResult, type VoteTally } from "./vote.ts";
export { runTournament, readVerdict, type TournamentResult, type MatchResult, type Bye } from "./tournament.ts";
export {
  runSubtask,
  spawnSubtaskSchema,
  readMainAnswer,
  checkGrant,
  SPAWN_SUBTASK_TOOL,
  type SubtaskResult,
  type SubtaskRecord,
  type SubtaskOptions,
} from "./subtask.ts";
