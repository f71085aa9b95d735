/** The permission gate: `permission.*` (tiers and approvals) and `agent_permissions.*` (per-agent postures). */
import { method } from "./declaration.ts";
import { anyObject, boolean, ir, listOf, object, optional, string } from "./schema.ts";

const proposal = ir("ActionProposalInput");
const tierResult = object({ granted_tier: string }, ["granted_tier"]);
const decision = object(
  { action_id: string, fingerprint: string, decision: string, required: string, reversibility: string, granted: string, reason: string },
  ["action_id", "fingerprint", "decision", "required"],
);
/** What an approval names: `{ fingerprint, required_tier }` or `{ action }`, and its scope. */
const approvalParams = object({
  fingerprint: optional("string"),
  required_tier: optional("string"),
  action: optional("object"),
  reason: optional("string"),
  agent_id: optional("string"),
  run_id: optional("string"),
  uses: optional("number"),
  ttl_secs: optional("number"),
});
const postures = object({ default: anyObject, agents: anyObject }, ["default", "agents"]);

export const permissionMethods = {
  "permission.evaluate": method({
    role: "agent",
    summary: "The gate's decision for each action of a proposal.",
    params: object({ proposal }, ["proposal"]),
    result: object({ decisions: listOf(decision) }, ["decisions"]),
  }),
  "permission.pending": method({
    role: "agent",
    summary: "The actions of a proposal that need an approval (`permission.evaluate`'s needs_approval rows).",
    params: object({ proposal }, ["proposal"]),
    result: object({ pending: listOf(decision) }, ["pending"]),
  }),
  "permission.approve": method({
    role: "operator",
    summary: "Approves an operation, optionally scoped to an agent, a run, a number of uses or a time.",
    params: approvalParams,
    result: anyObject,
  }),
  "permission.reject": method({
    role: "operator",
    summary: "Rejects an operation, with the same scope as an approval.",
    params: approvalParams,
    result: anyObject,
  }),
  "permission.get_tier": method({
    role: "agent",
    summary: "The connection's standing tier.",
    params: object({}),
    result: tierResult,
  }),
  "permission.set_tier": method({
    role: "agent",
    summary: "Narrows the connection's standing tier (only an operator widens it, never above --tier).",
    params: object({ tier: string }, ["tier"]),
    result: tierResult,
  }),
  "agent_permissions.get": method({
    role: "agent",
    summary: "The per-agent postures (database only).",
    params: object({}),
    result: postures,
  }),
  "agent_permissions.set": method({
    role: "operator",
    summary: "Sets an agent's posture for one tier or every tier.",
    params: object({ agent_id: string, mode: string, tier: optional("string") }, ["agent_id", "mode"]),
    result: postures,
  }),
  "agent_permissions.reset": method({
    role: "operator",
    summary: "Removes an agent's overrides.",
    params: object({ agent_id: string }, ["agent_id"]),
    result: postures,
  }),
  "agent_permissions.evaluate": method({
    role: "agent",
    summary: "The posture an agent has at a tier.",
    params: object({ agent_id: string, tier: string }, ["agent_id", "tier"]),
    result: object({ agent_id: string, tier: string, mode: string, has_override: boolean }, ["agent_id", "tier", "mode", "has_override"]),
  }),
} as const;
