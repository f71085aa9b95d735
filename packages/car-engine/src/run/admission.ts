/**
 * The static gate a parsed proposal passes before anything runs. Only the
 * state-independent findings reject: an unregistered tool, parameters that
 * do not match the tool's schema, a state_write / state_read without a
 * string `key`, and a CostBudget the proposal exceeds on its face. Precondition and state-dependency findings stay advisory (they
 * are decided over declared effects only), so they are not computed here.
 * Parameters holding `$<id>.output` references are validated at dispatch,
 * once the references are resolved. Linear in the number of actions.
 */
import { findOutputRefs, stateActionKeys } from "@car/ir";
import type { ActionProposal, CostBudget } from "@car/ir";
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
}

export function admit(proposal: ActionProposal, tools: ToolRegistry, budget: CostBudget | undefined): Admission {
  const findings: AdmissionFinding[] = [];
  const n = proposal.actions.length;
  const hasRefs = new Uint8Array(n);
  let toolCalls = 0;
  for (let i = 0; i < n; i++) {
    const action = proposal.actions[i]!;
    if (findOutputRefs(action.parameters).length > 0) hasRefs[i] = 1;
    if (stateActionKeys(action) === undefined) {
      findings.push({ index: i, message: `a ${action.type} needs a string 'key' parameter${action.type === "state_read" ? " or a string array 'keys'" : ""}` });
      continue;
    }
    if (action.type !== "tool_call") continue;
    toolCalls++;
    const tool = tools.get(action.tool!);
    if (tool === undefined) {
      findings.push({ index: i, message: `unknown tool '${action.tool}'` });
      continue;
    }
    if (hasRefs[i] === 0 && tool.validateParams !== undefined) {
      const checked = tool.validateParams(action.parameters);
      if (!checked.ok) findings.push({ index: i, message: schemaMessage(action.tool!, checked.errors) });
    }
  }
  if (budget?.max_actions !== undefined && n > budget.max_actions) {
    findings.push({ index: -1, message: `budget exceeded: ${n} actions, the budget allows ${budget.max_actions}` });
  }
  if (budget?.max_tool_calls !== undefined && toolCalls > budget.max_tool_calls) {
    findings.push({ index: -1, message: `budget exceeded: ${toolCalls} tool calls, the budget allows ${budget.max_tool_calls}` });
  }
  return { findings, hasRefs };
}

export function schemaMessage(tool: string, errors: readonly { path: string; message: string }[]): string {
  return `parameters do not match the schema of tool '${tool}': ${schemaErrorDetail(errors)}`;
}

/** Schema errors as one line (`path message; …`), for parameters and outputs alike. */
export function schemaErrorDetail(errors: readonly { path: string; message: string }[]): string {
  return errors.map((e) => `${e.path === "" ? "(root)" : e.path} ${e.message}`).join("; ");
}
