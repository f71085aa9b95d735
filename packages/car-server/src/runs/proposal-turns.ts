/**
 * The proposal recorder: a proposal submitted on a connection whose current
 * run (`runs.start`) is in progress is recorded as that run's turns — one
 * per `tool_call` action, in proposal order — through the same append path
 * as client-narrated turns (index stamped by the store, `runs.trace.event`
 * to subscribers). The turns carry `session_id`, the id every `tools.execute`
 * of the proposal carried, so callbacks and trace join.
 */
import type { ActionProposal, JsonObject, ProposalResult } from "@car/ir";
import type { Session } from "../session.ts";
import { boundTurn } from "./run-turn.ts";

/** Records `result`'s tool calls as turns of the session's current run; nothing when there is none or it ended. */
export async function recordProposalTurns(session: Session, proposal: ActionProposal, result: ProposalResult): Promise<void> {
  const run_id = session.currentRunId;
  if (run_id === undefined) return;
  const hub = session.options.runs;
  if (hub.producerOf(run_id)?.id !== session.id) return;
  const run = await hub.store.get(run_id);
  if (run === undefined || run.status !== "in_progress") return;
  const recorded_at = hub.nowText();
  const turns: JsonObject[] = [];
  for (const action of proposal.actions) {
    if (action.type !== "tool_call") continue;
    const outcome = result.results.find((r) => r.action_id === action.id);
    const turn = boundTurn({
      record: "turn",
      tool: action.tool ?? null,
      parameters: action.parameters,
      output: outcome?.output ?? null,
      verifier_verdict: "passed",
      policy_rejected: outcome?.status === "rejected",
      proposal_id: result.proposal_id,
      action_id: action.id,
      status: outcome?.status ?? "rejected",
      error: outcome?.error ?? null,
      session_id: session.id,
      recorded_at,
    });
    if (turn !== undefined) turns.push(turn);
  }
  if (turns.length > 0) await hub.append(run_id, run.agent_id, turns);
}
