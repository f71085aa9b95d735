import { describe, expect, it } from "vitest";
import { metricsAlerts } from "./alerts.ts";
import { metricsSummary } from "./metrics.ts";

const base = { ...metricsSummary([]), actions_succeeded: 8, actions_failed: 2, error_rate: 0.2, avg_latency_ms: 120, cumulative_cost_usd: 3, cost_usd: 1 };

describe("metricsAlerts", () => {
  it("checks the budget against the cumulative spend, not the windowed one", () => {
    expect(metricsAlerts(base, { max_cost_usd: 2 }).map((a) => [a.kind, a.observed, a.threshold])).toEqual([["cost_overage", 3, 2]]);
    expect(metricsAlerts(base, { max_cost_usd: 3 })).toEqual([]);
  });

  it("fires latency and error-rate alerts above their thresholds, the error rate only from min_actions on", () => {
    expect(metricsAlerts(base, { max_avg_latency_ms: 100, max_error_rate: 0.1 }).map((a) => a.kind)).toEqual(["error_rate", "latency"]);
    expect(metricsAlerts(base, { max_error_rate: 0.1, min_actions: 11 })).toEqual([]);
    expect(metricsAlerts({ ...base, avg_latency_ms: null, error_rate: null }, { max_avg_latency_ms: 0, max_error_rate: 0 })).toEqual([]);
  });
});
