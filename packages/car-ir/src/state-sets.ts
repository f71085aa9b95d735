/**
 * The keys an action reads and writes. Both are unions of the explicit
 * transactional sets with the keys derived from the rest of the action: a
 * partial `write_set` must never narrow the real footprint, or a conflict on
 * an unlisted key would go undetected (car-ir-Action.md).
 */
import type { Action, ActionProposal, Reversibility } from "./types.ts";
import { getOwn } from "./json.ts";
import { compensationActionIndices } from "./compensation-actions.ts";
import { guarded } from "./input.ts";

function stateKeyParam(action: Action): string | undefined {
  const key = getOwn(action.parameters, "key");
  return typeof key === "string" ? key : undefined;
}

/** Appends `keys` to `out` by index (most are the frozen `EMPTY_LIST`, which `for…of` would allocate an iterator for). */
function pushAll(keys: readonly string[], out: string[]): void {
  for (let i = 0; i < keys.length; i++) out.push(keys[i]!);
}

/**
 * Appends every key an action writes — explicit `write_set`, `expected_effects`
 * keys, a `state_write`'s `key` parameter — to `out`, possibly more than once.
 * The hot path (the DAG) reuses one buffer instead of building a set per action.
 */
export function pushWrittenKeys(action: Action, out: string[]): void {
  pushAll(action.write_set, out);
  const effects = action.expected_effects;
  for (const key in effects) if (Object.hasOwn(effects, key)) out.push(key);
  if (action.type === "state_write") {
    const key = stateKeyParam(action);
    if (key !== undefined) out.push(key);
  }
}

/** Explicit `write_set` ∪ `expected_effects` keys ∪ a `state_write`'s `key` parameter. */
export function effectiveWriteSet(action: Action): string[] {
  const keys: string[] = [];
  pushWrittenKeys(action, keys);
  return [...new Set(keys)];
}

/**
 * The state keys a `state_write` (`parameters.key`) or `state_read`
 * (`parameters.key`, or a string array `parameters.keys`) names; `undefined`
 * when they are missing or not strings, which the executor cannot run.
 * Other action types name none (`[]`).
 */
export function stateActionKeys(action: Action): string[] | undefined {
  if (action.type !== "state_write" && action.type !== "state_read") return [];
  const key = stateKeyParam(action);
  if (key !== undefined) return [key];
  if (action.type === "state_read") {
    const keys = getOwn(action.parameters, "keys");
    if (Array.isArray(keys) && keys.every((k) => typeof k === "string")) return keys as string[];
  }
  return undefined;
}

/** Appends every key an action reads to `out`, possibly more than once (the buffer form of `effectiveReadSet`). */
export function pushReadKeys(action: Action, out: string[]): void {
  pushAll(action.read_set, out);
  pushAll(action.state_dependencies, out);
  const assumptions = action.assumptions;
  for (let i = 0; i < assumptions.length; i++) out.push(assumptions[i]!.key);
  if (action.type === "state_read") pushAll(stateActionKeys(action) ?? [], out);
}

/**
 * Every key some action lists in `state_dependencies`, or `undefined` when
 * none does: the only keys whose last writer a walk needs (most plans list
 * none, and a map of every written key costs a set per action).
 */
export function stateDependencyKeys(actions: readonly Action[]): Set<string> | undefined {
  let keys: Set<string> | undefined;
  for (let i = 0; i < actions.length; i++) {
    const listed = actions[i]!.state_dependencies;
    for (let k = 0; k < listed.length; k++) (keys ??= new Set()).add(listed[k]!);
  }
  return keys;
}

/** Explicit `read_set` ∪ `state_dependencies` ∪ assumption keys ∪ the keys a `state_read` names. */
export function effectiveReadSet(action: Action): string[] {
  const keys: string[] = [];
  pushReadKeys(action, keys);
  return [...new Set(keys)];
}

/** `compensable` with no `compensation`: the one incoherent pairing the types allow. */
export function missingRequiredCompensation(action: Action): boolean {
  return action.reversibility === "compensable" && action.compensation === undefined;
}

const RANK: Record<Reversibility, number> = { reversible: 0, compensable: 1, irreversible: 2 };

/**
 * The batch's rollback contract: the worst reversibility any action that runs
 * forward declares (a compensation action only ever runs to undo another, so
 * its own reversibility is not part of the contract). An empty batch is
 * `"reversible"` — nothing to undo is not "unknown".
 */
export function rollbackContract(proposal: Pick<ActionProposal, "actions">): Reversibility {
  return guarded("invalid_proposal", "proposal", () => {
    const compensations = compensationActionIndices(proposal.actions);
    let worst: Reversibility = "reversible";
    proposal.actions.forEach((a, i) => {
      if (!compensations.has(i) && RANK[a.reversibility] > RANK[worst]) worst = a.reversibility;
    });
    return worst;
  });
}
