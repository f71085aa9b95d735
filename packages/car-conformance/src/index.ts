export type { ConformanceRuntime, RuntimeFactory, SubmitError, SubmitOutcome } from "./adapter.ts";
export type { BehaviourStep, CapabilityFile, FinalExpectations, Scenario, ScenarioPolicy, ScenarioStep, ScenarioTool, SpecCitation } from "./scenario.ts";
export type { CapabilityReport, ConformanceReport, ScenarioReport, ScenarioStatus } from "./report.ts";
export { ToolBehaviours, type ToolCall, type ToolCallRecord, type ToolReply } from "./tool-behaviours.ts";
export { match, matches, OPERATORS, type Mismatch } from "./match.ts";
export { loadCapabilities, SCENARIOS_DIR } from "./load-scenarios.ts";
export { runScenario, type ScenarioFailure } from "./run-scenario.ts";
export { runConformance, type ProgressEvent, type RunOptions } from "./run-conformance.ts";
export { engineAdapter, type EngineAdapterOptions } from "./engine-adapter.ts";
