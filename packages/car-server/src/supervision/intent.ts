/**
 * A supervision intent: what a supervisor is shown of a parked proposal.
 * Trimmed by construction — each action's id, type, tool, reversibility,
 * parameter **key names** and a digest of its parameters, never a value —
 * so a supervisor that needs the arguments fetches them out of band.
 */
import { type Action, type JsonObject, paramsDigest, type ToolSchema } from "@car/ir";
import { classifyAction } from "@car/policy";
import { worseReversibility } from "./intent-filter.ts";

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

/** The proposal-level reversibility: the worst of its actions' (an empty proposal is `reversible`). */
export function worstOf(actions: readonly IntentAction[]): string {
  return actions.reduce((worst, a) => worseReversibility(worst, a.reversibility), "reversible");
}

export function intentJson(intent: SupervisionIntent): JsonObject {
  return intent as unknown as JsonObject;
}
