/**
 * The shapes shared by every multi-agent pattern: the agent callback the
 * user supplies, the options that hand the runtime its limits and its audit
 * log, and the report of what the runtime cut off.
 */
import type { AgentOutput, AgentSpec, Clock, IdGenerator, ToolSchemaInput } from "@car/ir";
import type { EventLog } from "../events/event-log.ts";
import type { Runtime } from "../runtime.ts";
import type { Timers } from "@car/ir";
import type { BudgetExceeded, BudgetLimits, Usage } from "./budget.ts";

/** One answer an agent's task was composed from (a previous stage, a peer, a worker). */
export interface AgentInput {
  name: string;
  answer: string;
}

/** The third argument of the agent callback: what the runtime knows about this call. */
export interface AgentCallContext {
  /** The multi-agent run; also the `proposal_id` of its events. */
  run_id: string;
  /** This call, unique within the run; the `action_id` of its events. */
  call_id: string;
  /** Where in the pattern the call sits, e.g. `stage 2`, `round 1`, `map 3`, `reduce`. */
  step: string;
  /** The task the run was started with (the `task` argument may be composed from it). */
  original_task: string;
  /** The answers the `task` argument was composed from, so a callback can build its own prompt. */
  inputs: readonly AgentInput[];
  /** Aborted when the per-agent timeout, the run's duration budget or the caller's signal ends the call. */
  signal: AbortSignal;
  /** The per-agent timeout, or null when there is none. */
  timeout_ms: number | null;
  /** Tools the runtime offers this call (the subtask main agent's `spawn_subtask`), for a runner that calls tools natively; usually empty. */
  tools: readonly ToolSchemaInput[];
}

/**
 * The user's agent: any model, any tool loop. It returns an AgentOutput (an
 * object or its JSON text), validated strictly; a throw, a malformed output
 * or a reported `error` becomes an error entry for this agent, never a crash.
 */
export type AgentFn = (spec: AgentSpec, task: string, ctx: AgentCallContext) => AgentOutput | string | Promise<AgentOutput | string>;

export interface MultiOptions {
  /** Supplies the event log, clock, timers and ids unless given separately. */
  runtime?: Runtime;
  /** Where the run's events go; the runtime's log by default, else a private in-memory log. */
  events?: EventLog;
  clock?: Clock;
  timers?: Timers;
  ids?: IdGenerator;
  /** Most agent calls in flight at once; 0 or absent = no limit. */
  maxConcurrency?: number;
  /** Each agent call is aborted after this many milliseconds; absent = no timeout. */
  agentTimeoutMs?: number;
  /** Read strictly (budget.ts): a limit the runtime cannot count is an `invalid_params` error. */
  budget?: BudgetLimits;
  /** Aborting it cancels agents in flight and skips the rest. */
  signal?: AbortSignal;
}

/** Why an agent did not produce an answer although the agent itself did not fail. */
/** `budget_exceeded`: a token or cost ceiling was reached (the result's `budget_exceeded` names it). */
export type CutOffReason = "timeout" | "max_agents" | "max_duration" | "budget_exceeded" | "cancelled" | "upstream_failed";

export interface CutOff {
  name: string;
  step: string;
  /** Present when the call was started (timeouts, agents aborted in flight). */
  call_id?: string;
  reason: CutOffReason;
  detail: string;
}

/** Fields every pattern's result carries. */
export interface RunSummary {
  run_id: string;
  task: string;
  /** The run's answer; null when it could not produce one. */
  final_answer: string | null;
  /** Agent calls started. */
  agent_calls: number;
  /** Agent calls whose entry carries an error (including timeouts and aborts in flight). */
  failed_calls: number;
  /** What the runtime's limits, the caller's signal or an upstream failure stopped. */
  cut_off: CutOff[];
  duration_ms: number;
  /** The tokens and cost the agents reported. */
  usage: Usage;
  /** The token or cost ceiling that stopped further agents, or null. */
  budget_exceeded: BudgetExceeded | null;
}
