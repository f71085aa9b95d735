/**
 * The public face of the Agent IR: what a producer or consumer of proposals
 * needs — wire and input types, parsing, schemas, errors, ordering,
 * preconditions, references, digests, serialisation and factories. The
 * kernels the other CAR packages share (flat edge lists, key sets, the
 * precondition miss, shape checks) are `@car/ir/internal`: no stability
 * promise there.
 */
export * from "./types.ts";
export * from "./input-types.ts";
export * from "./errors.ts";
export { cloneJson, emptyMap, getOwn, hasKey, isJsonObject, jsonEquals, setOwn } from "./json.ts";
export { effectiveReadSet, effectiveWriteSet, missingRequiredCompensation, rollbackContract } from "./state-sets.ts";
export { COST_TARGET_DEFAULTS } from "./defaults.ts";
export {
  evaluatePrecondition,
  evaluatePreconditions,
  KNOWN_OPERATORS,
  type PreconditionOutcome,
  type StateLookup,
} from "./precondition.ts";
export { buildDag, dependencyEdges, type DependencyGraph } from "./dag.ts";
export * from "./clock.ts";
export { schemas, type SchemaName } from "./schemas.ts";
export { proposalInputSchema } from "./proposal-input-schema.ts";
export { compileSchema, type SchemaError, type SchemaValidation, type SchemaValidator } from "./compile-schema.ts";
export { canonicalJson, paramsDigest } from "./canonical.ts";
export {
  parseOutputRef,
  findOutputRefs,
  outputRefsOf,
  hasOutputRefs,
  resolveOutputRefs,
  InterpolationBudget,
  DEFAULT_MAX_INTERPOLATED_BYTES,
  type OutputRef,
  type LocatedOutputRef,
  type OutputLookup,
} from "./refs.ts";
export { didYouMean, refuseUnknownFields, unknownFields, type UnknownField } from "./unknown-fields.ts";
export { parseProposal, parseProposalWithGraph, isParsedProposal, parseAction, type ParseOptions, type ParsedProposal } from "./parse-proposal.ts";
export { assertParsedActions, isParsedShape } from "./parsed-shape.ts";
export { checkProposalActions, checkProposalBytes, DEFAULT_PROPOSAL_LIMITS, type ProposalLimits } from "./limits.ts";
export { parseToolSchema, parseAgentSpec, parseAgentOutput, parseTraceEvent, parseStateMutation } from "./parse-shapes.ts";
export {
  serializeProposal,
  stringifyProposal,
  serializeAction,
  serializeActionResult,
  serializeProposalResult,
  serializeCostSummary,
} from "./serialize.ts";
export {
  newAction,
  toolCall,
  stateWrite,
  stateRead,
  assertion,
  precondition,
  type ActionOverrides,
  type FactoryOptions,
} from "./factories.ts";
export * from "./timers.ts";
export { traceRuleName, TRACE_RULE_KINDS, type TraceRule, type TraceRuleKind, type TraceScope } from "./trace-rule.ts";
