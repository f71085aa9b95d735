/**
 * An action the approval gate held — at admission (its declared form), at
 * dispatch (the form its references resolved to, DECISIONS §22) or as a
 * compensation step — as data for the run's report: what to approve it by
 * (the fingerprint) and the tiers.
 */
import type { ApprovalDecision, PermissionTier } from "@car/policy";

export interface GatedAction {
  action_id: string;
  stage: "admission" | "dispatch" | "compensation";
  decision: "needs_approval" | "deny";
  /** The operation fingerprint an approval is recorded under (`car approvals approve <fingerprint>`). */
  fingerprint: string;
  required: PermissionTier;
  granted: PermissionTier;
  reason?: string;
  /** Who answered, when a ledger record did: `"none"` when no approver could be asked. */
  reviewer?: string;
}

export function gatedAction(action_id: string, stage: GatedAction["stage"], d: ApprovalDecision): GatedAction {
  const gated: GatedAction = {
    action_id,
    stage,
    decision: d.decision === "deny" ? "deny" : "needs_approval",
    fingerprint: d.fingerprint,
    required: d.required,
    granted: d.granted,
  };
  if (d.reason !== undefined) gated.reason = d.reason;
  if (d.record?.reviewer !== undefined) gated.reviewer = d.record.reviewer;
  return gated;
}
