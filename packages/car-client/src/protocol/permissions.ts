/** The permission gate: `permission.*` (tiers and approvals) and `agent_permissions.*` (per-agent postures). */
import { method } from "./declaration.ts";
import { anyObject, boolean, ir, listOf, number, object, optional, string, stringList } from "./schema.ts";

const proposal = ir("ActionProposalInput");
const tierResult = object({ granted_tier: string }, ["granted_tier"]);
const tierName = { enum: ["read_only", "sandbox_edit", "full_access"] } as const;
const decision = object(
  { action_id: string, fingerprint: string, decision: string, required: string, reversibility: string, granted: string, reason: string },
  ["action_id", "fingerprint", "decision", "required"],
);
/** A proposal waiting for an approval: the operation's fingerprint and tiers, the tool and its parameter names (never a value), who asked. */
const waiting = object(
  {
    id: string,
    fingerprint: string,
    required: string,
    granted: string,
    tool: string,
    parameter_keys: stringList,
    action_id: string,
    proposal_id: string,
    run_id: string,
    session_id: { type: ["string", "null"] },
    asked_by: string,
    created_at: number,
    deadline: number,
  },
  ["id", "fingerprint", "required", "granted", "parameter_keys", "action_id", "proposal_id", "asked_by", "created_at", "deadline"],
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
  /** Why the decision was made (kept with the record; bounded by the server). */
  evidence: {},
});
/** Every posture: the default per tier, each agent's per-tier overrides, and exact (agent, tool) overrides when any exist. */
const postures = object({ default: anyObject, agents: anyObject, tool_overrides: anyObject }, ["default", "agents"]);

export const permissionMethods = {
  "permission.evaluate": method({
    role: "agent",
    summary:
      "The gate's decision for each action of a proposal. `skill` names the skill that drove it (in the tenant's or the global skills): its deployment_tier caps the standing tier, echoed as skill_ceiling.",
    params: object({ proposal, skill: optional("string"), tenant_id: optional("string") }, ["proposal"]),
    result: object({ decisions: listOf(decision), skill_ceiling: tierName }, ["decisions"]),
  }),
  "permission.pending": method({
    role: "agent",
    summary:
      "With a proposal: its actions that need an approval (`permission.evaluate`'s needs_approval rows, under the same `skill` ceiling). Without: the proposals waiting for an approval (`wait_for_approval_ms`), oldest first; an agent sees only its own.",
    params: object({ proposal, skill: optional("string"), tenant_id: optional("string") }),
    result: object({ pending: listOf({ anyOf: [decision, waiting] }), skill_ceiling: tierName }, ["pending"]),
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
  "agent_permissions.set_default": method({
    role: "operator",
    summary: "Sets the default posture: a preset (cautious, balanced, trusting) for every tier, or one tier's mode.",
    params: object({ preset: optional("string"), tier: optional("string"), mode: optional("string") }),
    result: postures,
  }),
  "agent_permissions.set_tool": method({
    role: "operator",
    summary: "Sets an exact (agent, tool) override for every tier: deny or require_approval (needs permissions.agent-tool-overrides.v1).",
    params: object({ agent_id: string, tool: string, mode: string }, ["agent_id", "tool", "mode"]),
    result: postures,
  }),
  "agent_permissions.reset_tool": method({
    role: "operator",
    summary: "Removes an exact (agent, tool) override.",
    params: object({ agent_id: string, tool: string }, ["agent_id", "tool"]),
    result: postures,
  }),
  "agent_permissions.evaluate_tool": method({
    role: "operator",
    summary: "The posture an agent has for one tool at a tier, and where it comes from (needs permissions.agent-tool-overrides.v1).",
    params: object({ agent_id: string, tool: string, tier: string }, ["agent_id", "tool", "tier"]),
    result: object(
      {
        agent_id: string,
        tool: string,
        tier: string,
        mode: string,
        has_tool_override: boolean,
        active: boolean,
        schema_bound: boolean,
        schema_digest_present: boolean,
        authorization_source: { enum: ["agent_tool_override", "tier_posture"] },
      },
      ["agent_id", "tool", "tier", "mode", "has_tool_override", "active", "schema_bound", "schema_digest_present", "authorization_source"],
    ),
  }),
} as const;
