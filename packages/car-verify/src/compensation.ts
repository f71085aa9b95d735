/**
 * Compensation coherence: `compensable` with no `compensation` is the one
 * incoherent pairing the wire allows (a warning: the action can still run,
 * it just cannot be undone as claimed), and an `action_ref` compensation must
 * name an action of the same proposal (an error: the undo path is broken).
 */
import type { Action, VerificationIssue } from "@car/ir";
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
