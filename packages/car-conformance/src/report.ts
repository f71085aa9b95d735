/** The report a run produces: per capability, per scenario, with every failure. */
import type { SpecCitation } from "./scenario.ts";
import type { ScenarioFailure } from "./run-scenario.ts";

export type ScenarioStatus = "passed" | "failed" | "skipped";

export interface ScenarioReport {
  id: string;
  title: string;
  spec: SpecCitation;
  status: ScenarioStatus;
  /** Why it was skipped (a missing feature). */
  skip_reason?: string;
  failures: ScenarioFailure[];
  duration_ms: number;
}

export interface CapabilityReport {
  capability: string;
  title: string;
  required: boolean;
  passed: number;
  failed: number;
  skipped: number;
  scenarios: ScenarioReport[];
}

export interface ConformanceReport {
  runtime: string;
  /** True when every scenario of every required capability passed (or was skipped). */
  conformant: boolean;
  passed: number;
  failed: number;
  skipped: number;
  duration_ms: number;
  capabilities: CapabilityReport[];
}
