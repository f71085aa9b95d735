export { PolicyEngine, type PolicyRule } from "./engine.ts";
export { type PolicyState, type StateLookup } from "./state.ts";
export { denyToolRule } from "./rules/deny-tool.ts";
export { denyToolParamRule } from "./rules/deny-tool-param.ts";
export { requireStateRule } from "./rules/require-state.ts";
export { callbackRule, type PolicyCallback } from "./rules/callback.ts";
export { argvToCommand, denyCommandRule, type DenyCommandSpec } from "./rules/deny-command.ts";
export { describePolicy, policyRuleFrom, traceRuleOfDefinition, type PolicyDefinition } from "./rules/definition.ts";
export { PolicyLoadError } from "./files/policy-load-error.ts";
export {
  PolicyRules,
  type AllowToolParamSpec,
  type ApplyOptions,
  type DenyToolParamMatchingSpec,
  type DenyToolParamSpec,
  type RateLimitToolSpec,
  UNPROVEN_ANSWERS,
  type UnprovenAnswer,
} from "./files/policy-rules.ts";
export { DENY_COMMAND_FIELDS, parsePolicyFile, readDenyCommandSpec } from "./files/parse-policy-file.ts";
export { isDangling, isPolicyFileName, loadPolicyDir, MAX_POLICY_FILE_BYTES, readPolicyFile } from "./files/load-policy-dir.ts";
export { ALLOW, type InspectionOutcome, type InspectionResult, type Inspector, InspectorChain } from "./inspectors/inspector.ts";
export { DEFAULT_ALLOWED_HOSTS, EgressInspector, type EgressOptions } from "./inspectors/egress/egress-inspector.ts";
export { canonicalHost, curlHost, isAllowlisted, isLoopback, UNKNOWN_HOST, urlHosts } from "./inspectors/egress/hosts.ts";
export * from "./gate/index.ts";
export { RepetitionInspector, type RepetitionOptions } from "./inspectors/repetition-inspector.ts";
export { isPermissionTier, maxTier, PERMISSION_TIERS, type PermissionTier, tierRank } from "./tiers/permission-tier.ts";
export { type ActionClassification, classifyAction, classifyProposal, type ProposalClassification } from "./tiers/classify-action.ts";
export { operationFingerprint } from "./tiers/operation-fingerprint.ts";
export { type ApprovalSubject, approvalSubject } from "./tiers/approval-subject.ts";
export { APPROVE_WORDS, type ApprovalWord, approvalOutcome, REJECT_WORDS } from "./tiers/approval-answer.ts";
export {
  answeringDecision,
  type ApprovalLedger,
  type ApprovalOutcome,
  type ApprovalRecord,
  type ApprovalScope,
  checkApprovalScope,
  InMemoryApprovalLedger,
  inForce,
  remainingUses,
} from "./tiers/approval-ledger.ts";
export {
  type ApprovalAnswer,
  type ApprovalCallback,
  ApprovalGate,
  type ApprovalGateOptions,
  type ApprovalRequest,
  type AuthorizeOptions,
  type GateDecision as ApprovalDecision,
  type GateVerdict,
  type Posture,
} from "./tiers/approval-gate.ts";
export { evaluateTrace, type TraceCall, TraceFacts, TraceGate, type TraceRecord } from "./trace/trace-gate.ts";
export { traceRuleFrom } from "./trace/trace-rule-spec.ts";
