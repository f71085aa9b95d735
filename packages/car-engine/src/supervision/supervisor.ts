/**
 * The host's supervisor at admission (reference websocket-core.md
 * § supervision). A host that lets outside processes watch proposals gives
 * the runtime one `Supervisor`; for every proposal it admits the runtime
 * asks it, right after the static gate and before every other check. The
 * supervisor either lets the proposal through untouched (nobody watches it:
 * `undefined`, which must cost no more than a map read) or parks it and
 * hands back the decision to wait for. The wait is fail-closed on the
 * host's side (a timeout is a `deny`), and `allow` is not a bypass: the
 * transaction check and the approval gate still run after it.
 */
import type { ActionProposal, JsonObject, ToolSchema } from "@car/ir";

/**
 * A supervisor's verdict. `escalate` hands the proposal to the approval
 * ledger: every action then needs a recorded approval (`EvaluateOptions.escalated`).
 */
export type SupervisionDecision =
  | { kind: "allow"; reviewer: string; reason?: string }
  | { kind: "deny"; reviewer: string; reason: string }
  | { kind: "escalate"; reviewer: string; reason: string };

export type SupervisionKind = SupervisionDecision["kind"];

/** What the supervisor is shown: the proposal as admitted, its run and session. */
export interface SupervisionRequest {
  proposal: ActionProposal;
  run_id: string;
  session_id: string | null;
  /** Fires when the run is cancelled: the host stops waiting and the decision should settle as a `deny`. */
  signal: AbortSignal | undefined;
  /** The registered schema of a tool, for classifying actions the way the approval gate does. */
  schemaOf(tool: string): ToolSchema | undefined;
}

/** A parked proposal: the intent's id, what the audit record says of it, and the decision to wait for. */
export interface ParkedProposal {
  intent_id: string;
  /** The intent as the audit chain keeps it: trimmed, never a parameter value. */
  record: JsonObject;
  decision: Promise<SupervisionDecision>;
}

/** Parks a proposal someone watches, or answers `undefined` (nobody does). Must not throw for a proposal it does not watch. */
export type Supervisor = (request: SupervisionRequest) => ParkedProposal | undefined;
