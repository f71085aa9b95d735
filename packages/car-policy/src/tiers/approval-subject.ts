/**
 * What an approval decision is about, for one action: its operation's
 * fingerprint, the tier it needs, and the action and tool it came from —
 * the part of an `ApprovalRecord` that whoever records a decision on an
 * action (`permission.approve`, a conformance adapter) derives the same way.
 */
import type { Action, ToolSchema } from "@car/ir";
import type { ApprovalRecord } from "./approval-ledger.ts";
import { classifyAction } from "./classify-action.ts";
import { operationFingerprint } from "./operation-fingerprint.ts";

export type ApprovalSubject = Pick<ApprovalRecord, "fingerprint" | "required_tier" | "action_id" | "tool">;

export function approvalSubject(action: Action, schema?: ToolSchema): ApprovalSubject {
  return {
    fingerprint: operationFingerprint(action),
    required_tier: classifyAction(action, schema).tier,
    action_id: action.id,
    ...(action.tool !== undefined ? { tool: action.tool } : {}),
  };
}
