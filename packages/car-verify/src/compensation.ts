/**
 * Compensation coherence: `compensable` with no `compensation` is the one
 * incoherent pairing the wire allows (a warning: the action can still run,
 * it just cannot be undone as claimed), and an `action_ref` compensation must
 * name an action of the same proposal (an error: the undo path is broken).
 */
import type { Action, VerificationIssue } from "@car/ir";
import type { FlatEdges } from "@car/ir/internal";
import { missingRequiredCompensation } from "@car/ir";
import { issue } from "./issue.ts";

export function compensationIssues(actions: readonly Action[], ids: ReadonlyMap<string, number>): VerificationIssue[] {
  const issues: VerificationIssue[] = [];
  for (const action of actions) {
    if (missingRequiredCompensation(action)) {
      issues.push(issue(action, "warning", `action '${action.id}' is 'compensable' but declares no compensation`));
    }
    const comp = action.compensation;
    if (comp?.type === "action_ref" && !ids.has(comp.action_id)) {
      issues.push(issue(action, "error", `action '${action.id}' names compensation action '${comp.action_id}', which is not in the proposal`));
    }
  }
  return issues;
}

/**
 * Compensation actions used wrongly: a forward action that depends on one
 * (it never runs forward, so the dependant would always be rejected), and a
 * compensation declared on an action that is not `compensable` (the
 * rollback only compensates `compensable` actions, so it would never run).
 */
export function compensationUseIssues(
  actions: readonly Action[],
  edges: Pick<FlatEdges, "predStart" | "preds">,
  compensations: ReadonlySet<number>,
): VerificationIssue[] {
  const issues: VerificationIssue[] = [];
  const { predStart, preds } = edges;
  actions.forEach((action, i) => {
    if (compensations.has(i)) return;
    for (let e = predStart[i]!; e < predStart[i + 1]!; e++) {
      const p = preds[e]!;
      if (compensations.has(p)) {
        issues.push(issue(action, "error", `action '${action.id}' depends on '${actions[p]!.id}', a compensation action, which never runs forward`));
      }
    }
    if (action.compensation !== undefined && action.reversibility !== "compensable") {
      issues.push(
        issue(action, "warning", `action '${action.id}' declares a compensation but is '${action.reversibility}'; only 'compensable' actions are compensated`),
      );
    }
    if (action.compensation?.type === "action_ref" && action.compensation.action_id === action.id) {
      issues.push(issue(action, "error", `action '${action.id}' names itself as its compensation`));
    }
  });
  return issues;
}
