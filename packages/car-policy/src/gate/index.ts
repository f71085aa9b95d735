/**
 * `@car/policy/gate`: the policy-check gate on its own, for the CLI hook whose
 * cold start matters. It loads policy files, the rule engine and the egress
 * guard — nothing else from the package.
 */
export {
  policyCheck,
  policyCheckDirs,
  loadPolicies,
  type LoadedPolicies,
  type Basis,
  type Finding,
  type GateAnswer,
  type GateDecision,
  type GateLoadFailure,
  type PolicyCheckResult,
  type PolicySource,
} from "./policy-check.ts";
export { carHomeRoot, type CarHomeOptions, isStateRoot, policyDirs, policyDirsExcluding, PROJECT_DIR, repoProjectDirs } from "./policy-dirs.ts";
export { patchPaths, resolvePatchPath } from "./patch-paths.ts";
export { shellPatches } from "./shell-patches.ts";
export { unprovenReasons } from "./unproven.ts";
export { KNOWN_PROGRAMS, type KnownProgram } from "./known-programs.ts";
export {
  asCarParams,
  inferredCarTool,
  isAccountedFor,
  mappingFor,
  TOOL_MAP,
  type ToolMapping,
  UNMAPPED_CAR_TOOLS,
  unaccountedTools,
} from "./tool-map.ts";
export { describeSandboxSpec, type SandboxSpec, sandboxSpecFrom } from "../sandbox/sandbox-spec.ts";
export {
  type LiteralPath,
  type SandboxMode,
  type SandboxPlace,
  type SandboxSettings,
  sandboxHosts,
  sandboxMode,
  sandboxSettings,
  workspaceRoot,
} from "../sandbox/sandbox-settings.ts";
export { loadPolicyDir } from "../files/load-policy-dir.ts";
export { PolicyRules } from "../files/policy-rules.ts";
