/** The `CostBudget` a proposal exceeds on its face: more actions, or more tool calls, than it allows. */
import type { ActionProposal, CostBudget } from "@car/ir";
import type { AdmissionFinding } from "./admission.ts";

export function budgetFindings(proposal: ActionProposal, budget: CostBudget | undefined): AdmissionFinding[] {
  const findings: AdmissionFinding[] = [];
  const n = proposal.actions.length;
  if (budget?.max_actions !== undefined && n > budget.max_actions) {
    findings.push({ index: -1, message: `budget exceeded: ${n} actions, the budget allows ${budget.max_actions}`, code: "budget_exceeded" });
  }
  if (budget?.max_tool_calls !== undefined) {
    let toolCalls = 0;
    for (const action of proposal.actions) if (action.type === "tool_call") toolCalls++;
    if (toolCalls > budget.max_tool_calls)
      findings.push({ index: -1, message: `budget exceeded: ${toolCalls} tool calls, the budget allows ${budget.max_tool_calls}`, code: "budget_exceeded" });
  }
  return findings;
}
