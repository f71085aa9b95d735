/**
 * `metricsAlerts`' argument: an AlertThresholds object as JSON, its keys
 * snake_case like every JSON payload of the original (`max_cost_usd`,
 * `max_error_rate`, `max_avg_latency_ms`, `min_actions`). Each is checked;
 * any other key is `invalid_params` — `max_goals_ungrounded` included, since
 * this runtime evaluates no goals and could not enforce it (DECISIONS §25).
 */
import { CarError, isJsonObject } from "@car/ir";
import type { AlertThresholds } from "../events/alerts.ts";
import { jsonArg } from "./json-args.ts";

const RULES: Readonly<Record<keyof AlertThresholds, [(n: number) => boolean, string]>> = {
  max_cost_usd: [(n) => n >= 0, "a non-negative number"],
  max_error_rate: [(n) => n >= 0 && n <= 1, "a number from 0 to 1"],
  max_avg_latency_ms: [(n) => n >= 0, "a non-negative number"],
  min_actions: [(n) => Number.isSafeInteger(n) && n >= 0, "a non-negative integer"],
};

export function alertThresholdsArg(thresholdsJson: unknown): AlertThresholds {
  const raw = jsonArg(thresholdsJson, "thresholdsJson");
  if (!isJsonObject(raw)) throw new CarError("invalid_params", "thresholdsJson must be a JSON object");
  const thresholds: AlertThresholds = {};
  for (const [key, value] of Object.entries(raw)) {
    if (key === "max_goals_ungrounded")
      throw new CarError("invalid_params", "thresholdsJson.max_goals_ungrounded: this runtime evaluates no goals, so it cannot enforce a goal threshold");
    if (!Object.hasOwn(RULES, key))
      throw new CarError("invalid_params", `thresholdsJson: unknown key '${key}' (the thresholds are ${Object.keys(RULES).join(", ")})`);
    const [ok, rule] = RULES[key as keyof AlertThresholds];
    if (typeof value !== "number" || !Number.isFinite(value) || !ok(value)) throw new CarError("invalid_params", `thresholdsJson.${key} must be ${rule}`);
    thresholds[key as keyof AlertThresholds] = value;
  }
  return thresholds;
}
