/**
 * Roll-ups over the audit log that the reference's `metrics.summary` and
 * `events.cost_by_agent` return. Both are folds over the events the runtime
 * already writes, so they cost nothing until asked for. Tokens and cost are
 * what multi-agent calls reported in `AgentOutput.tokens`, kept on their
 * `agent_finished` / `agent_failed` events as `tokens_in` / `tokens_out` /
 * `cost_usd`; the runtime itself runs no model.
 */
import { getOwn, type JsonValue } from "@car/ir";
import type { CarEvent } from "./event.ts";
import { EVENT_KINDS, MULTI_EVENT_KINDS } from "./event-kinds.ts";

export interface AgentCost {
  agent: string;
  calls: number;
  tokens_in: number;
  tokens_out: number;
  cost_usd: number;
}

export interface MetricsSummary {
  total_events: number;
  actions_succeeded: number;
  actions_failed: number;
  actions_rejected: number;
  /** Of the actions that finished (succeeded + failed + rejected); null before any did. */
  success_rate: number | null;
  error_rate: number | null;
  cost_usd: number;
  cumulative_cost_usd: number;
  tokens_in: number;
  tokens_out: number;
  /** Mean time from a tool action's `action_started` to its `action_succeeded` / `action_failed`, in ms; null before any. */
  avg_latency_ms: number | null;
  approvals_recorded: number;
  permission_decisions: number;
  gate_rejections: number;
  policy_violations: number;
  cost_by_agent: AgentCost[];
}

function numberAt(event: CarEvent, key: string): number {
  const v: JsonValue | undefined = getOwn(event.data, key);
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

/** Per-agent calls, tokens and cost, folded from multi-agent runs' finished and failed agent events, sorted by agent. */
export function costByAgent(events: readonly CarEvent[]): AgentCost[] {
  const byAgent = new Map<string, AgentCost>();
  for (const event of events) {
    if (event.kind !== MULTI_EVENT_KINDS.agentFinished && event.kind !== MULTI_EVENT_KINDS.agentFailed) continue;
    const agent = getOwn(event.data, "agent");
    if (typeof agent !== "string") continue;
    let row = byAgent.get(agent);
    if (row === undefined) byAgent.set(agent, (row = { agent, calls: 0, tokens_in: 0, tokens_out: 0, cost_usd: 0 }));
    row.calls++;
    row.tokens_in += numberAt(event, "tokens_in");
    row.tokens_out += numberAt(event, "tokens_out");
    row.cost_usd += numberAt(event, "cost_usd");
  }
  return [...byAgent.values()].sort((a, b) => (a.agent < b.agent ? -1 : a.agent > b.agent ? 1 : 0));
}

function actionKey(event: CarEvent): string {
  return `${event.proposal_id ?? ""}\u0000${event.action_id ?? ""}`;
}

/** The spend `events` record: agents' reported `cost_usd`, summed. */
export function costUsdOf(events: readonly CarEvent[]): number {
  return costByAgent(events).reduce((total, row) => total + row.cost_usd, 0);
}

/**
 * The operational roll-up of an event log (`metrics.summary`). `cutCostUsd`
 * is the spend on events the log no longer holds (its cuts' checkpoints,
 * `cutCostUsd` in `@car/engine/durable`): `cost_usd` is what the log holds,
 * `cumulative_cost_usd` adds it, so a retention trim never lowers the total.
 */
export function metricsSummary(events: readonly CarEvent[], cutCostUsd = 0): MetricsSummary {
  let succeeded = 0;
  let failed = 0;
  let rejected = 0;
  let latencyTotal = 0;
  let latencyCount = 0;
  // The outcome events carry no duration (their data is shared between calls), so latency is measured
  // between each tool action's start and its outcome, on the events' own clock.
  const started = new Map<string, number>();
  let approvals = 0;
  let decisions = 0;
  let gateRejections = 0;
  let violations = 0;
  for (const event of events) {
    switch (event.kind) {
      case EVENT_KINDS.actionStarted:
        if (typeof getOwn(event.data, "tool") === "string") started.set(actionKey(event), Date.parse(event.timestamp));
        break;
      case EVENT_KINDS.actionSucceeded:
      case EVENT_KINDS.actionFailed: {
        if (event.kind === EVENT_KINDS.actionSucceeded) succeeded++;
        else failed++;
        const key = actionKey(event);
        const from = started.get(key);
        const to = Date.parse(event.timestamp);
        if (from !== undefined && Number.isFinite(from) && Number.isFinite(to)) {
          started.delete(key);
          latencyTotal += Math.max(0, to - from);
          latencyCount++;
        }
        break;
      }
      case EVENT_KINDS.actionRejected:
        rejected++;
        break;
      case EVENT_KINDS.policyViolation:
        violations++;
        break;
      case EVENT_KINDS.approvalDecided:
        decisions++;
        if (getOwn(event.data, "decision") !== "allow") gateRejections++;
        break;
      case "approval_recorded":
        approvals++;
        break;
    }
  }
  const finished = succeeded + failed + rejected;
  const agents = costByAgent(events);
  const sum = (field: "tokens_in" | "tokens_out" | "cost_usd") => agents.reduce((total, row) => total + row[field], 0);
  return {
    total_events: events.length,
    actions_succeeded: succeeded,
    actions_failed: failed,
    actions_rejected: rejected,
    success_rate: finished === 0 ? null : succeeded / finished,
    error_rate: finished === 0 ? null : (failed + rejected) / finished,
    cost_usd: sum("cost_usd"),
    cumulative_cost_usd: sum("cost_usd") + cutCostUsd,
    tokens_in: sum("tokens_in"),
    tokens_out: sum("tokens_out"),
    avg_latency_ms: latencyCount === 0 ? null : latencyTotal / latencyCount,
    approvals_recorded: approvals,
    permission_decisions: decisions,
    gate_rejections: gateRejections,
    policy_violations: violations,
    cost_by_agent: agents,
  };
}
