/**
 * A supervision intent: what a supervisor is shown of a parked proposal.
 * Trimmed by construction — each action's id, type, tool, reversibility,
 * parameter **key names** and a digest of its parameters, never a value —
 * so a supervisor that needs the arguments fetches them out of band.
 */
import { type Action, type JsonObject, paramsDigest, rfc3339, type ToolSchema } from "@car/ir";
import { classifyAction } from "@car/policy";
import { type FilterSubject, worseReversibility } from "./intent-filter.ts";
import type { SupervisionRequest } from "./supervisor.ts";

export interface IntentAction {
  id: string;
  action_type: string;
  tool?: string;
  reversibility: string;
  parameter_keys: string[];
  parameters_digest: string;
}

export interface SupervisionIntent {
  id: string;
  proposal_id: string;
  /** Who submitted it: `agent:<id>` or `conn:<session id>`. */
  source: string;
  session_id?: string;
  /** The worst of the actions' reversibility: a plan is as recoverable as its least recoverable step. */
  reversibility: string;
  /** RFC 3339. */
  created_at: string;
  actions: IntentAction[];
}

export function intentAction(action: Action, schema: ToolSchema | undefined): IntentAction {
  return {
    id: action.id,
    action_type: action.type,
    ...(action.tool !== undefined ? { tool: action.tool } : {}),
    reversibility: classifyAction(action, schema).reversibility,
    parameter_keys: Object.keys(action.parameters).sort(),
    parameters_digest: paramsDigest(action.parameters),
  };
}

/** Every action of the request's proposal as a supervisor is shown it, classified against its tool's registered schema. */
export function intentActions(request: Pick<SupervisionRequest, "proposal" | "schemaOf">): IntentAction[] {
  return request.proposal.actions.map((a) => intentAction(a, a.tool === undefined ? undefined : request.schemaOf(a.tool)));
}

/** Who submitted a proposal, as its intent names them. */
export interface IntentSource {
  /** `agent:<id>` or `conn:<session id>`. */
  source: string;
  session_id: string | null;
}

/** The intent of a proposal about to be parked, created now. */
export function supervisionIntent(id: string, proposalId: string, actions: IntentAction[], who: IntentSource): SupervisionIntent {
  return {
    id,
    proposal_id: proposalId,
    source: who.source,
    ...(who.session_id !== null ? { session_id: who.session_id } : {}),
    reversibility: worstOf(actions),
    created_at: rfc3339(Date.now()),
    actions,
  };
}

/** What a filter looks at in an intent's actions: the tools called, who submitted it, the worst reversibility. */
export function filterSubject(actions: readonly IntentAction[], sessionId: string | null, agentId: string | null | undefined): FilterSubject {
  return {
    tools: actions.flatMap((a) => (a.tool === undefined ? [] : [a.tool])),
    session_id: sessionId,
    agent_id: agentId ?? undefined,
    reversibility: worstOf(actions),
  };
}

/** The audit record of a parked intent: the intent without its own id (the event carries it). */
export function intentRecord(intent: SupervisionIntent): JsonObject {
  const { id: _id, ...rest } = intent;
  return rest as unknown as JsonObject;
}

/** The proposal-level reversibility: the worst of its actions' (an empty proposal is `reversible`). */
export function worstOf(actions: readonly IntentAction[]): string {
  return actions.reduce((worst, a) => worseReversibility(worst, a.reversibility), "reversible");
}

export function intentJson(intent: SupervisionIntent): JsonObject {
  return intent as unknown as JsonObject;
}
