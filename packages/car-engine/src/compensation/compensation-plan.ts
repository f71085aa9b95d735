/**
 * What a rollback with compensation has to do: for every forward action that
 * succeeded, in reverse order of completion, either nothing (`reversible`:
 * restoring state undoes it), a compensation step (`compensable` with a
 * runnable compensation), or a gap the result must name (`irreversible`, a
 * missing or broken compensation — `undoGap`, the predicate `verify`'s
 * `rollback_contract` uses, so the two always agree).
 *
 * A `tool` compensation becomes a tool call under the compensated action's
 * id, with its `timeout_ms`, and its retries when its `failure_behavior` is
 * `retry`. An `action_ref` compensation runs the named action as declared
 * (its own parameters — `$id.output` references resolve against the forward
 * run's outputs — timeout and retries).
 */
import { toolCall, undoGap } from "@car/ir";
import type { Action, JsonObject, UndoGap } from "@car/ir";

export interface CompensationStep {
  /** The forward action being undone; events and results carry its id. */
  readonly action_id: string;
  readonly action_index: number;
  /** What is dispatched. */
  readonly call: Action;
  /** For an `action_ref` compensation, the compensation action's index (its `$id.output` references need resolving). */
  readonly ref_index?: number;
}

export interface CompensationGap {
  readonly action_id: string;
  readonly reason: UndoGap;
}

export interface CompensationPlan {
  readonly steps: readonly CompensationStep[];
  /** Succeeded actions nothing can undo, in reverse completion order. */
  readonly gaps: readonly CompensationGap[];
}

/** `completed`: indices of the forward actions that succeeded, in completion order. */
export function planCompensation(actions: readonly Action[], completed: readonly number[], indexOf: ReadonlyMap<string, number>): CompensationPlan {
  const steps: CompensationStep[] = [];
  const gaps: CompensationGap[] = [];
  for (let k = completed.length - 1; k >= 0; k--) {
    const i = completed[k]!;
    const action = actions[i]!;
    const gap = undoGap(action, indexOf);
    if (gap !== undefined) {
      gaps.push({ action_id: action.id, reason: gap });
      continue;
    }
    const comp = action.compensation;
    if (action.reversibility !== "compensable" || comp === undefined) continue;
    if (comp.type === "tool") {
      steps.push({ action_id: action.id, action_index: i, call: compensationCall(action, comp.tool, comp.parameters) });
    } else {
      const j = indexOf.get(comp.action_id)!;
      steps.push({ action_id: action.id, action_index: i, call: actions[j]!, ref_index: j });
    }
  }
  return { steps, gaps };
}

function compensationCall(action: Action, tool: string, parameters: JsonObject): Action {
  const call = toolCall(tool, parameters, {
    id: action.id,
    max_retries: action.max_retries,
    failure_behavior: action.failure_behavior === "retry" ? "retry" : "abort",
  });
  if (action.timeout_ms !== undefined) call.timeout_ms = action.timeout_ms;
  return call;
}

/** The words a result uses for a gap. */
export function gapText(reason: UndoGap): string {
  switch (reason) {
    case "irreversible":
      return "the action is irreversible";
    case "missing_compensation":
      return "it is compensable but declares no compensation";
    case "broken_compensation":
      return "its compensation names no action of the proposal";
  }
}
