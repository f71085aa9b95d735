/**
 * The static gate at admission (`staticGate` from @car/verify — the same
 * findings, in the same words, that `verify` reports) over the registered
 * tools: unknown tools and parameters that do not match their schema.
 * Precondition and state-dependency findings stay advisory (they are
 * decided over declared effects only), so they are not computed here.
 * Linear in the number of actions.
 */
import type { ActionProposal } from "@car/ir";
import { staticGate } from "@car/verify";
import type { ToolRegistry } from "../tools/tool-registry.ts";
import type { Admission } from "./admission.ts";

export function staticChecks(proposal: ActionProposal, tools: ToolRegistry): Admission {
  const { findings, hasRefs } = staticGate(proposal.actions, tools);
  return { findings: findings.map((f) => ({ index: f.index, message: f.message, code: "verification_failed" })), hasRefs, approvals: new Map() };
}
