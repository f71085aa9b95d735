export * from "./types.ts";
export * from "./input-types.ts";
export * from "./errors.ts";
// `adoptJson` stays internal: it rewrites its argument in place, safe only on the parser's own fresh data.
export { cloneJson, emptyMap, getOwn, hasKey, isJsonObject, jsonEquals, setOwn, stringCoerce } from "./json.ts";
export * from "./state-sets.ts";
export { COST_TARGET_DEFAULTS } from "./defaults.ts";
export * from "./precondition.ts";
export { buildDag, dependencyEdges, levelsFromPreds, levelsOf, NATIVE_LEVELS_MIN_ACTIONS, successorRows, type DependencyGraph, type FlatEdges } from "./dag.ts";
export { Int32List } from "./int32-list.ts";
export * from "./clock.ts";
export { schemas, type SchemaName } from "./schemas.ts";
export { proposalInputSchema } from "./proposal-input-schema.ts";
export { shapeProblems, pointerToken } from "./validate.ts";
export { compileSchema, type SchemaError, type SchemaValidation, type SchemaValidator } from "./compile-schema.ts";
export { canonicalJson, paramsDigest } from "./canonical.ts";
export {
  parseOutputRef,
  findOutputRefs,
  outputRefsOf,
  hasOutputRefs,
  pushOutputRefIds,
  resolveOutputRefs,
  InterpolationBudget,
  DEFAULT_MAX_INTERPOLATED_BYTES,
  type OutputRef,
  type LocatedOutputRef,
  type OutputLookup,
} from "./refs.ts";
export { readJsonObject } from "./input.ts";
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
export { compensationActionIndices, undoGap } from "./compensation-actions.ts";
