// Timers live in @car/ir (shared with @car/policy); re-exported here because every runtime user injects them.
export { manualTimers, sleep, systemTimers, type ManualTimers, type TimerId, type Timers } from "@car/ir";
export * from "./store/state-store.ts";
export { InMemoryStateStore, type InMemoryStateStoreOptions } from "./store/in-memory-state-store.ts";
export { WorkingState, type PendingMutation, type ReadRecord } from "./store/working-state.ts";
export * from "./store/runtime-store.ts";
export { borrowedStore } from "./durable/borrowed-store.ts";
export * from "./events/event.ts";
export { COMPENSATION_EVENTS, SESSION_TRACE_EVENT, type EventData } from "./events/event-kinds.ts";
export * from "./events/event-log.ts";
export { InMemoryEventLog } from "./events/in-memory-event-log.ts";
export { costByAgent, metricsSummary, type AgentCost, type MetricsSummary } from "./events/metrics.ts";
export { DEFAULT_ALERT_MIN_ACTIONS, metricsAlerts, type AlertKind, type AlertThresholds, type MetricsAlert } from "./events/alerts.ts";
export { AsyncQueue } from "./async-queue.ts";
export { Runtime, DEFAULT_MAX_OUTPUT_BYTES, type RuntimeOptions, type ExecuteOptions, type RollbackMode } from "./runtime.ts";
export { AgentSessions, type AgentSession } from "./trace/agent-sessions.ts";
export type { AdmissionGuard, AdmittedRun } from "./admission/admission-guard.ts";
export type { CommitRefusal, ProposalOutcome, RunOutcomeKind, RunReport } from "./run/run-report.ts";
export type { GatedAction } from "./gates/gated-action.ts";
export type { CompensationReport } from "./compensation/compensation-run.ts";
export type { ApprovalWait } from "./admission/approvals.ts";
export { ApprovalWaits, DEFAULT_APPROVAL_POLL_MS, type ApprovalWaitListener, type WaitingApproval, type WaitOutcome } from "./supervision/approval-waits.ts";
export type { ParkedProposal, SupervisionDecision, SupervisionKind, SupervisionRequest, Supervisor } from "./supervision/supervisor.ts";
export {
  filterSubject,
  intentActions,
  intentJson,
  intentRecord,
  supervisionIntent,
  type IntentAction,
  type IntentSource,
  type SupervisionIntent,
} from "./supervision/intent.ts";
export {
  filterJson,
  filterMatches,
  parseIntentFilter,
  type FilterSubject,
  type IntentFilter,
} from "./supervision/intent-filter.ts";
export {
  sharesOversight,
  type OversightWakeups,
  type SharedIntentRow,
  type SharedOversight,
  type SharedSubscriber,
  type SharesOversight,
} from "./supervision/shared-oversight.ts";
export { COMPENSATED_WARNING } from "./compensation/compensated-result.ts";
export { DEFAULT_COMPENSATION_TIMEOUT_MS } from "./compensation/compensation-dispatch.ts";
export type { PendingCompensation } from "./compensation/compensation-phase.ts";
export type { PolicyDefinition } from "@car/policy";
export { TRACE_ATTRIBUTES } from "./telemetry/run-tracer.ts";
export { TerminalToolError } from "./tools/terminal-tool-error.ts";
export type { ToolHandler, ToolCallContext, ToolCallback, ToolChunkSource } from "./tools/handler.ts";
export { readToolAnswer, toolCallOf, type ToolCall, type ToolCaller } from "./tools/tool-call.ts";
export { BUFFER_CAP, type DetachedPollResult } from "./tools/detached.ts";
export { ROLLBACK_WARNING } from "./run/outcomes.ts";
export { RETRY_BASE_MS } from "./run/dispatch.ts";
export type { ErrorClass } from "./tools/action-failure.ts";
// The durable-store contract (SQLite and PostgreSQL both offer it), importable without loading either backend.
export {
  isAuditedStore,
  postureLookup,
  type AuditedRuntimeStore,
  type DurableApprovalLedger,
  type DurableRuntimeStore,
  type LedgerEntry,
  type PostureEntry,
  type PostureStore,
  type RetentionPolicy,
  type RetentionResult,
} from "./durable/durable-store.ts";
export {
  RUN_TURN_CEILING,
  runSummary,
  runPageBefore,
  stampTurns,
  type RunAppendDrop,
  type RunAppendOutcome,
  type RunEndOutcome,
  type RunEndRefusal,
  type RunPageKey,
  type RunStart,
  type RunStatus,
  type RunStore,
  type RunSummary,
} from "./runs/run-store.ts";
export { InMemoryRunStore } from "./runs/in-memory-run-store.ts";
export type { ChainBreak, ChainReport, LogCut } from "./durable/chain-verify.ts";
export type { Checkpoint, LogCutAct, SignedCheckpoint } from "./durable/checkpoint.ts";
