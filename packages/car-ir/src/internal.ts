/**
 * `@car/ir/internal`: the kernels @car/verify, @car/policy, @car/engine and
 * the CLI share with the IR — flat edge lists and levels, the key-set walks,
 * the precondition miss, shape checks and JSON helpers that assume the
 * parser's own data. They are shaped for the hot paths, not for users, and
 * may change in any release; the public API is `@car/ir`.
 */
// `adoptJson` stays private even here: it rewrites its argument in place, safe only on the parser's own fresh data.
export { stringCoerce } from "./json.ts";
export { pushReadKeys, pushWrittenKeys, stateActionKeys, stateDependencyKeys } from "./state-sets.ts";
export { checkPrecondition, preconditionFailureMessage, type PreconditionMiss } from "./precondition.ts";
export { levelsFromPreds, levelsOf, NATIVE_LEVELS_MIN_ACTIONS, successorRows, type FlatEdges } from "./dag.ts";
export { Int32List } from "./int32-list.ts";
export { shapeProblems, pointerToken } from "./validate.ts";
export { pushOutputRefIds } from "./refs.ts";
export { readJsonObject } from "./input.ts";
export { compensationActionIndices, undoGap } from "./compensation-actions.ts";
