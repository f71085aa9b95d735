/** The report a run produces: what was run, against what, per capability, per scenario, with every failure. */
import type { SpecCitation } from "./scenario.ts";
import type { ScenarioFailure } from "./run-scenario.ts";

/**
 * `error`: the scenario could not be judged (the runtime was not isolated —
 * it started with leftover state), so it says nothing about conformance.
 */
export type ScenarioStatus = "passed" | "failed" | "skipped" | "error";

/**
 * `conformant`: every required capability ran in full and passed, and every
 * optional capability the runtime declared passed. `partial`: the run was
 * filtered (`--capability`, `--scenario`) and what ran passed — not a
 * verdict on the runtime. `inconclusive`: some scenario could not be judged,
 * or a required scenario was skipped (the runtime lacks an ability it needs)
 * (see `error`). `not_conformant`: a required or declared capability failed.
 */
export type Verdict = "conformant" | "not_conformant" | "partial" | "inconclusive";

export interface ScenarioReport {
  id: string;
  title: string;
  spec: SpecCitation;
  status: ScenarioStatus;
  /** Why it was skipped (a feature the runtime did not declare). */
  skip_reason?: string;
  failures: ScenarioFailure[];
  duration_ms: number;
}

export interface CapabilityReport {
  capability: string;
  title: string;
  required: boolean;
  /** False for an optional capability the runtime did not declare: its scenarios were not checked. */
  checked: boolean;
  passed: number;
  failed: number;
  skipped: number;
  errors: number;
  scenarios: ScenarioReport[];
}

export interface ConformanceReport {
  runtime: string;
  verdict: Verdict;
  /** True exactly when `verdict` is `conformant`. */
  conformant: boolean;
  /** The @car/conformance version that ran. */
  suite_version: string;
  /** The specification text the scenarios were written against. */
  spec_revision: string;
  /** The features (optional capabilities and abilities) the runtime declared. */
  features: string[];
  /** Optional capabilities that were not checked because the runtime did not declare them. */
  not_checked: string[];
  /** The run's selection; empty lists mean the whole suite. */
  filters: { capabilities: string[]; scenarios: string[] };
  passed: number;
  failed: number;
  skipped: number;
  errors: number;
  /** RFC 3339: when the run started. */
  timestamp: string;
  duration_ms: number;
  capabilities: CapabilityReport[];
}
