/**
 * Operational read-outs of the reference protocol: `capabilities.list`
 * (which methods this connection may call, and with what role),
 * `metrics.summary` and `events.cost_by_agent` (folds over the audit log the
 * session sees).
 */
import type { JsonValue } from "@car/ir";
import { type AlertThresholds, costByAgent, type MetricsSummary, metricsAlerts, metricsSummary } from "@car/engine";
import { storeCutCostUsd } from "@car/engine/durable";
import { invalidParams, optionalNumber, paramsObject } from "../params.ts";
import { type MethodContext, type MethodHandler, type MethodTable, agentMethod } from "../method.ts";

/** `capabilities.list` over `table` (each method's declared role), given lazily because the table includes this method. */
export function capabilitiesList(table: () => MethodTable): MethodHandler {
  return (_params: JsonValue | undefined, ctx: MethodContext): JsonValue => {
    const methods = Object.entries(table())
      .map(([method, spec]) => ({ method, role: spec.role }))
      .filter((row) => ctx.role === "operator" || row.role === "agent")
      .sort((a, b) => (a.method < b.method ? -1 : 1));
    return { caller_role: ctx.role, count: methods.length, methods };
  };
}

/** The summary, its cumulative spend carried across the log's cuts by their checkpoints (a store that cannot cut has none). */
async function currentSummary(ctx: MethodContext): Promise<MetricsSummary> {
  return metricsSummary(ctx.session.runtime.events.query(), await storeCutCostUsd(ctx.session.options.store));
}

async function summary(_params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  return (await currentSummary(ctx)) as unknown as JsonValue;
}

function costs(_params: JsonValue | undefined, ctx: MethodContext): JsonValue {
  return costByAgent(ctx.session.runtime.events.query()) as unknown as JsonValue;
}

/** `metrics.alerts`: the summary and the thresholds it trips. Goal thresholds are refused: this runtime has no goals to count (DECISIONS §25). */
async function alerts(params: JsonValue | undefined, ctx: MethodContext): Promise<JsonValue> {
  const p = paramsObject(params);
  if (p["max_goals_ungrounded"] !== undefined)
    throw invalidParams("max_goals_ungrounded: this runtime evaluates no goals, so it cannot enforce a goal threshold");
  const thresholds: AlertThresholds = {};
  for (const field of ["max_cost_usd", "max_error_rate", "max_avg_latency_ms", "min_actions"] as const) {
    const value = optionalNumber(p, field);
    if (value === undefined) continue;
    if (value < 0 || (field === "max_error_rate" && value > 1) || (field === "min_actions" && !Number.isInteger(value))) {
      throw invalidParams(
        field === "max_error_rate"
          ? "max_error_rate must be between 0 and 1"
          : `${field} must be a non-negative ${field === "min_actions" ? "integer" : "number"}`,
      );
    }
    thresholds[field] = value;
  }
  const current = await currentSummary(ctx);
  return { summary: current, alerts: metricsAlerts(current, thresholds) } as unknown as JsonValue;
}

export const operationMethods: MethodTable = {
  "metrics.summary": agentMethod(summary),
  "metrics.alerts": agentMethod(alerts),
  "events.cost_by_agent": agentMethod(costs),
};
