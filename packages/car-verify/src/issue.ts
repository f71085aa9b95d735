/**
 * One constructor for a finding, so every check writes the wire shape the
 * same way. Findings are exact unless a check says otherwise: only the loop
 * guess in `repeated-calls.ts` is a `heuristic`.
 */
import type { Action, EvidenceTier, Severity, VerificationIssue } from "@car/ir";

export function issue(action: Action | null, severity: Severity, message: string, tier: EvidenceTier = "decision_procedure"): VerificationIssue {
  return { action_id: action === null ? null : action.id, severity, message, tier };
}
