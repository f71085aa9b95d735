/**
 * Compensation actions. An action that another action names in an
 * `{"type":"action_ref"}` compensation is *declared* in the proposal but
 * never runs forward: it exists only to undo the action that names it. That
 * reference is the whole marking — no extra field — so the scheduler, verify
 * and simulate all read the same fact from the wire shape the spec defines.
 */
import type { Action, UndoGap } from "./types.ts";
import { guarded } from "./input.ts";

/** Index of every action some other action names as its `action_ref` compensation. */
export function compensationActionIndices(actions: readonly Action[]): Set<number> {
  return guarded("invalid_proposal", "proposal", () => compensationIndices(actions));
}

function compensationIndices(actions: readonly Action[]): Set<number> {
  const out = new Set<number>();
  let index: Map<string, number> | undefined;
  for (let i = 0; i < actions.length; i++) {
    const action = actions[i]!;
    const comp = action.compensation;
    if (comp?.type !== "action_ref" || comp.action_id === action.id) continue;
    index ??= new Map(actions.map((a, i) => [a.id, i]));
    const target = index.get(comp.action_id);
    if (target !== undefined) out.add(target);
  }
  return out;
}

/**
 * What stands between `action` (if it ran) and undoing it: nothing for a
 * `reversible` action (restoring state undoes it) or a `compensable` one
 * with a runnable compensation; otherwise the gap. `indexOf` maps action ids
 * of the proposal to their index (the DAG's `indexOf`).
 */
export function undoGap(action: Action, indexOf: ReadonlyMap<string, number>): UndoGap | undefined {
  if (action.reversibility === "reversible") return undefined;
  if (action.reversibility === "irreversible") return "irreversible";
  const comp = action.compensation;
  if (comp === undefined) return "missing_compensation";
  if (comp.type === "action_ref" && (comp.action_id === action.id || !indexOf.has(comp.action_id))) return "broken_compensation";
  return undefined;
}
