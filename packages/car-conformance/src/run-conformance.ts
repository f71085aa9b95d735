/**
 * `runConformance`: every selected scenario against fresh runtimes from the
 * factory, one at a time (scenarios observe timing and ordering, so they do
 * not share the machine with each other), with a per-scenario deadline so a
 * runtime that hangs fails that scenario instead of the run. The verdict is
 * honest about what was checked: optional capabilities count only when the
 * runtime declares them, and neither a filtered run nor one that skipped a
 * required scenario is ever called conformant.
 */
import { CarError } from "@car/ir";
import type { RuntimeFactory } from "./adapter.ts";
import { loadCapabilities } from "./load-scenarios.ts";
import type { CapabilityReport, ConformanceReport, ScenarioReport, Verdict } from "./report.ts";
import { ISOLATION, runScenario, type ScenarioFailure } from "./run-scenario.ts";
import type { CapabilityFile, Scenario } from "./scenario.ts";
import { SPEC_REVISION, SUITE_VERSION } from "./suite-info.ts";

export type ProgressEvent =
  | { type: "capability"; capability: string; title: string; required: boolean; checked: boolean; scenarios: number }
  | { type: "scenario"; capability: string; report: ScenarioReport; done: number; total: number };

export interface RunOptions extends RuntimeFactory {
  /** Only these capabilities (by name); all when absent or empty. Naming an optional capability checks it. */
  capabilities?: readonly string[];
  /** Only scenarios whose id contains one of these strings. */
  scenarioFilter?: readonly string[];
  /** The suite to run (default: the bundled scenarios). */
  suite?: readonly CapabilityFile[];
  /** Called as each capability starts and each scenario ends. */
  onProgress?: (event: ProgressEvent) => void;
  /** Per-scenario deadline (default 30 s). */
  scenarioTimeoutMs?: number;
}

const DEFAULT_SCENARIO_TIMEOUT_MS = 30_000;

/** Every feature name a runtime may declare for `suite`: its optional capabilities and the abilities scenarios require. */
export function knownFeatures(suite: readonly CapabilityFile[]): string[] {
  const names = new Set<string>();
  for (const f of suite) {
    if (!f.required) names.add(f.capability);
    for (const s of f.scenarios) for (const r of s.requires ?? []) names.add(r);
  }
  return [...names].sort();
}

/** Runs the suite and returns the report; never throws for a runtime's failures (only for an unknown capability or a scenario filter that selects nothing). */
export async function runConformance(options: RunOptions): Promise<ConformanceReport> {
  const started = performance.now();
  const timestamp = new Date().toISOString();
  const suite = options.suite ?? loadCapabilities();
  const wanted = options.capabilities ?? [];
  const unknown = wanted.filter((c) => !suite.some((f) => f.capability === c));
  if (unknown.length > 0)
    throw new CarError("invalid_params", `unknown capability: ${unknown.join(", ")} (known: ${suite.map((f) => f.capability).join(", ")})`);
  const declared = [...new Set(options.features ?? [])].sort();
  const features = new Set(declared);
  const filters = { capabilities: [...wanted], scenarios: [...(options.scenarioFilter ?? [])] };
  const selected = suite
    .filter((f) => wanted.length === 0 || wanted.includes(f.capability))
    .map((f) => ({ ...f, scenarios: f.scenarios.filter((s) => selectedScenario(s, options.scenarioFilter)) }))
    .filter((f) => f.scenarios.length > 0);
  // A filter that selects nothing would print an empty PARTIAL that reads like a pass: a mistyped id is bad usage.
  if (selected.length === 0 && filters.scenarios.length > 0)
    throw new CarError(
      "invalid_params",
      `no scenario matches --scenario ${filters.scenarios.join(", ")}${wanted.length > 0 ? ` in ${wanted.join(", ")}` : ""}`,
    );
  const isChecked = (f: CapabilityFile): boolean => f.required || features.has(f.capability) || wanted.includes(f.capability);
  const total = selected.reduce((n, f) => n + f.scenarios.length, 0);
  let done = 0;
  const capabilities: CapabilityReport[] = [];
  for (const file of selected) {
    const checked = isChecked(file);
    options.onProgress?.({
      type: "capability",
      capability: file.capability,
      title: file.title,
      required: file.required,
      checked,
      scenarios: file.scenarios.length,
    });
    const cap: CapabilityReport = {
      capability: file.capability,
      title: file.title,
      required: file.required,
      checked,
      passed: 0,
      failed: 0,
      skipped: 0,
      errors: 0,
      scenarios: [],
    };
    for (const scenario of file.scenarios) {
      const report = checked ? await runOne(scenario, options, features) : notChecked(scenario, file.capability);
      cap.scenarios.push(report);
      if (report.status === "error") cap.errors++;
      else cap[report.status]++;
      done++;
      options.onProgress?.({ type: "scenario", capability: file.capability, report, done, total });
    }
    capabilities.push(cap);
  }
  const sum = (k: "passed" | "failed" | "skipped" | "errors"): number => capabilities.reduce((n, c) => n + c[k], 0);
  const filtered = filters.capabilities.length > 0 || filters.scenarios.length > 0;
  // A required scenario that did not run (it needs an ability the runtime lacks, such as `raw_output` over
  // JSON-RPC) checked nothing: the runtime may pass it or not, so a full run cannot be called conformant.
  const requiredSkipped = capabilities.some((c) => c.required && c.skipped > 0);
  const verdict: Verdict = filtered
    ? "partial"
    : sum("errors") > 0
      ? "inconclusive"
      : sum("failed") > 0
        ? "not_conformant"
        : requiredSkipped
          ? "inconclusive"
          : "conformant";
  return {
    runtime: options.name ?? "runtime",
    verdict,
    conformant: verdict === "conformant",
    suite_version: SUITE_VERSION,
    spec_revision: SPEC_REVISION,
    features: declared,
    not_checked: capabilities.filter((c) => !c.checked).map((c) => c.capability),
    filters,
    passed: sum("passed"),
    failed: sum("failed"),
    skipped: sum("skipped"),
    errors: sum("errors"),
    timestamp,
    duration_ms: Math.round(performance.now() - started),
    capabilities,
  };
}

function selectedScenario(s: Scenario, filter: readonly string[] | undefined): boolean {
  return filter === undefined || filter.length === 0 || filter.some((f) => s.id.includes(f));
}

function notChecked(scenario: Scenario, capability: string): ScenarioReport {
  return {
    id: scenario.id,
    title: scenario.title,
    spec: scenario.spec,
    status: "skipped",
    skip_reason: `not checked: the runtime does not declare feature ${capability}`,
    failures: [],
    duration_ms: 0,
  };
}

async function runOne(scenario: Scenario, options: RunOptions, features: ReadonlySet<string>): Promise<ScenarioReport> {
  const base = { id: scenario.id, title: scenario.title, spec: scenario.spec };
  const missing = (scenario.requires ?? []).filter((f) => !features.has(f));
  if (missing.length > 0) return { ...base, status: "skipped", skip_reason: `needs feature ${missing.join(", ")}`, failures: [], duration_ms: 0 };
  const started = performance.now();
  let failures: ScenarioFailure[];
  let runtime: Awaited<ReturnType<RunOptions["createRuntime"]>> | undefined;
  const deadline = options.scenarioTimeoutMs ?? DEFAULT_SCENARIO_TIMEOUT_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    runtime = await options.createRuntime();
    const timedOut = new Promise<ScenarioFailure[]>((resolve) => {
      timer = setTimeout(
        () =>
          resolve([
            {
              where: "scenario",
              path: "(root)",
              expected: `completion within ${deadline} ms`,
              actual: "still running",
              message: "the scenario did not finish in time (a hung call or proposal)",
            },
          ]),
        deadline,
      );
    });
    failures = await Promise.race([runScenario(scenario, runtime), timedOut]);
  } catch (err) {
    failures = [
      {
        where: "setup",
        path: "(root)",
        expected: "a runtime",
        actual: String(err),
        message: `creating the runtime failed: ${err instanceof Error ? err.message : String(err)}`,
      },
    ];
  } finally {
    clearTimeout(timer);
  }
  if (runtime !== undefined) {
    try {
      await options.destroyRuntime?.(runtime);
    } catch (err) {
      failures.push({
        where: "teardown",
        path: "(root)",
        expected: "a clean shutdown",
        actual: String(err),
        message: `destroying the runtime failed: ${err instanceof Error ? err.message : String(err)}`,
      });
    }
  }
  const status = failures.some((f) => f.where === ISOLATION) ? "error" : failures.length === 0 ? "passed" : "failed";
  return { ...base, status, failures, duration_ms: Math.round(performance.now() - started) };
}
