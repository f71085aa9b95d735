/**
 * Admission: the static gate (`staticGate` from @car/verify — the same
 * findings, in the same words, that `verify` reports) over the registered
 * tools, then the CostBudget the proposal exceeds on its face. Precondition
 * and state-dependency findings stay advisory (they are decided over
 * declared effects only), so they are not computed here. Linear in the
 * number of actions.
 */
import type { ActionProposal, CostBudget } from "@car/ir";
import type { ApprovalRecord } from "@car/policy";
import { staticGate } from "@car/verify";
import type { ToolRegistry } from "../tools/tool-registry.ts";

export interface AdmissionFinding {
  /** Declaration index of the offending action, or -1 for the proposal as a whole. */
  index: number;
  message: string;
}

export interface Admission {
  findings: AdmissionFinding[];
  /** `hasRefs[i]`: action i's parameters hold output references (validated at dispatch instead). */
  hasRefs: Uint8Array;
  /** By action id: the ledger approval that admitted an action with references; it answers for the resolved form at dispatch. */
  approvals: Map<string, ApprovalRecord>;
}

export function admit(proposal: ActionProposal, tools: ToolRegistry, budget: CostBudget | undefined): Admission {
  const { findings, hasRefs } = staticGate(proposal.actions, tools);
  const n = proposal.actions.length;
  if (budget?.max_actions !== undefined && n > budget.max_actions) {
    findings.push({ index: -1, message: `budget exceeded: ${n} actions, the budget allows ${budget.max_actions}` });
  }
  if (budget?.max_tool_calls !== undefined) {
    let toolCalls = 0;
    for (const action of proposal.actions) if (action.type === "tool_call") toolCalls++;
    if (toolCalls > budget.max_tool_calls)
      findings.push({ index: -1, message: `budget exceeded: ${toolCalls} tool calls, the budget allows ${budget.max_tool_calls}` });
  }
  return { findings, hasRefs, approvals: new Map() };
}
