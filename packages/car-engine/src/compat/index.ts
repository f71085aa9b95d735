/**
 * `@car/engine/compat`: the original Node binding's names and JSON-string
 * conventions for the in-scope surface. Code written for the original
 * changes its import line and runs; new code should use `@car/engine`.
 */
export { CarRuntime, type CarRuntimeOptions } from "./car-runtime.ts";
export {
  executeProposal,
  verify,
  simulate,
  simulateMonteCarlo,
  optimize,
  equivalent,
  rankProposals,
  permissionClassify,
  runPipeline,
  runSwarm,
  runSupervisor,
  runMapReduce,
  runVote,
  runTournament,
  runSubtask,
} from "./functions.ts";
export {
  registerToolHandler,
  unregisterToolHandler,
  registerToolCancelHandler,
  unregisterToolCancelHandler,
  registerAgentRunner,
  type JsonCallback,
  type AgentRunner,
} from "./tool-handler.ts";
export type { BudgetLimits } from "../multi/budget.ts";
export { TerminalToolError } from "../tools/terminal-tool-error.ts";
export { DaemonRpcError, HostClient, protocolVersion, clientVersion, discoverToken, type DaemonOptions } from "./daemon.ts";
