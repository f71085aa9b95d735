/**
 * Threshold alerts over a `MetricsSummary` (reference `metrics.alerts`): a
 * host dashboard's "is anything wrong" check. The cost budget is checked
 * against the monotonic `cumulative_cost_usd`, so a retention trim can never
 * un-fire a tripped budget; the error-rate alert waits for `min_actions`
 * finished actions, so one early failure is not a 100% error rate.
 */
import type { MetricsSummary } from "./metrics.ts";

export interface AlertThresholds {
  max_cost_usd?: number;
  /** 0..1. */
  max_error_rate?: number;
  max_avg_latency_ms?: number;
  /** Finished actions before the error-rate alert may fire (default 5). */
  min_actions?: number;
}

export type AlertKind = "cost_overage" | "error_rate" | "latency";

export interface MetricsAlert {
  kind: AlertKind;
  message: string;
  observed: number;
  threshold: number;
}

export const DEFAULT_ALERT_MIN_ACTIONS = 5;

/** The alerts `summary` trips under `thresholds`, in a fixed order (cost, errors, latency). */
export function metricsAlerts(summary: MetricsSummary, thresholds: AlertThresholds): MetricsAlert[] {
  const alerts: MetricsAlert[] = [];
  const { max_cost_usd, max_error_rate, max_avg_latency_ms } = thresholds;
  if (max_cost_usd !== undefined && summary.cumulative_cost_usd > max_cost_usd) {
    alerts.push({
      kind: "cost_overage",
      message: `spend $${summary.cumulative_cost_usd.toFixed(4)} is over the $${max_cost_usd} budget`,
      observed: summary.cumulative_cost_usd,
      threshold: max_cost_usd,
    });
  }
  const finished = summary.actions_succeeded + summary.actions_failed + summary.actions_rejected;
  const minActions = thresholds.min_actions ?? DEFAULT_ALERT_MIN_ACTIONS;
  if (max_error_rate !== undefined && summary.error_rate !== null && finished >= minActions && summary.error_rate > max_error_rate) {
    alerts.push({
      kind: "error_rate",
      message: `error rate ${(summary.error_rate * 100).toFixed(1)}% over ${finished} actions is above ${(max_error_rate * 100).toFixed(1)}%`,
      observed: summary.error_rate,
      threshold: max_error_rate,
    });
  }
  if (max_avg_latency_ms !== undefined && summary.avg_latency_ms !== null && summary.avg_latency_ms > max_avg_latency_ms) {
    alerts.push({
      kind: "latency",
      message: `average tool latency ${summary.avg_latency_ms.toFixed(0)} ms is above ${max_avg_latency_ms} ms`,
      observed: summary.avg_latency_ms,
      threshold: max_avg_latency_ms,
    });
  }
  return alerts;
}
