/**
 * The rollback report: if this proposal aborts after everything ran, what
 * could `rollback: "compensate"` undo? Actions that only exist as
 * compensations are left out (they never run forward). The gap per action is
 * `undoGap`, the same predicate the engine applies when it compensates, so
 * what verify promises is what the rollback does; `missing_compensation`
 * matches `permission.classify`'s flag of the same name.
 */
import type { Action, RollbackReport } from "@car/ir";
import { rollbackContract } from "@car/ir";
import { undoGap } from "@car/ir/internal";

export function rollbackReport(actions: readonly Action[], indexOf: ReadonlyMap<string, number>, compensations: ReadonlySet<number>): RollbackReport {
  const not_undoable: RollbackReport["not_undoable"] = [];
  actions.forEach((action, i) => {
    if (compensations.has(i)) return;
    const gap = undoGap(action, indexOf);
    if (gap !== undefined) not_undoable.push({ action_id: action.id, reason: gap });
  });
  return { declared: rollbackContract({ actions: actions as Action[] }), fully_undoable: not_undoable.length === 0, not_undoable };
}
