/**
 * Every refusal the gates write, each in one place: admission, the forward
 * run and a compensation step say the same thing in the same words, so a
 * reader of a result or a log meets one sentence per cause.
 */
import type { PolicyViolation } from "@car/ir";
import type { ApprovalDecision } from "@car/policy";

/** A policy or a trace rule said no: `denied by policy: <name>: <reason>[; …]`. */
export function deniedByPolicy(violations: readonly Pick<PolicyViolation, "policy_name" | "reason">[]): string {
  return `denied by policy: ${violations.map((v) => `${v.policy_name}: ${v.reason}`).join("; ")}`;
}

/** The approval gate refused a call at dispatch (its resolved form, or a compensation step). */
export function deniedByApprovalGate(decision: ApprovalDecision): string {
  return `denied by approval gate: ${decision.reason ?? `requires ${decision.required}`}`;
}

/** The approval gate held an action at admission: what to approve it by, and the tiers. */
export function heldAtAdmission(decision: ApprovalDecision): string {
  const verdict = decision.decision === "deny" ? "denied by approval gate" : "needs approval";
  const reason = decision.reason !== undefined ? ` (${decision.reason})` : "";
  return `${verdict}: fingerprint ${decision.fingerprint} requires ${decision.required}, granted ${decision.granted}${reason}`;
}
