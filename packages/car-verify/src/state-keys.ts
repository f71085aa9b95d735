/**
 * A `state_write` or `state_read` names its keys in its parameters; the
 * executor cannot run one that does not, so verify says so before anything
 * runs instead of leaving it to fail at execution.
 */
import { stateActionKeys } from "@car/ir";
import type { Action, VerificationIssue } from "@car/ir";
import { issue } from "./issue.ts";

export function stateKeyIssues(actions: readonly Action[]): VerificationIssue[] {
  const issues: VerificationIssue[] = [];
  for (const action of actions) {
    if (stateActionKeys(action) !== undefined) continue;
    const needs = action.type === "state_read" ? "a string parameters.key or a string array parameters.keys" : "a string parameters.key";
    issues.push(issue(action, "error", `action '${action.id}' is a ${action.type} without ${needs}`));
  }
  return issues;
}
