/**
 * The server's rules for every proposal a session runs, installed once as
 * the session runtime's admission guard (`@car/engine`'s `admission`), so
 * `proposal.submit`, `planner.run` and any later source of actions get the
 * same refusals: the action limit, the tenancy boundary, a proposal slot on
 * the connection and on the server, and a meter on the tool output the run
 * receives.
 */
import { type ActionProposal, CarError } from "@car/ir";
import { type AdmissionGuard, TerminalToolError, type ToolCaller } from "@car/engine";
import { callClientTool } from "./client-tool.ts";
import type { Session } from "./session.ts";
import { checkProposalTenancy } from "./tenancy.ts";

/** Refuses a proposal with more actions than the server takes. */
function checkActionCount(proposal: ActionProposal, max: number): void {
  const n = proposal.actions.length;
  if (n > max) {
    throw new CarError("invalid_proposal", `the proposal has ${n} actions; this server accepts at most ${max} per proposal (--max-actions)`, {
      actions: n,
      limit: max,
    });
  }
}

/**
 * Counts the bytes of tool output one run receives, as the answers' frames
 * measured on the socket (nothing is serialised again to count): past the
 * limit the call fails terminally, so the run aborts and rolls back instead
 * of the server holding ever more output.
 */
function meteredCaller(session: Session, max: number): ToolCaller {
  let received = 0;
  const count = (bytes: number): void => {
    received += bytes;
  };
  return async (call, signal) => {
    const answer = await callClientTool(session, call, signal, count);
    if (received > max) {
      throw new TerminalToolError(`budget_exceeded: the proposal's tool outputs reached ${received} bytes, over the ${max}-byte limit (--max-output-bytes)`);
    }
    return answer;
  };
}

export function serverAdmission(session: Session): AdmissionGuard {
  return (proposal) => {
    const { limits, serverProposals } = session.options;
    checkActionCount(proposal, limits.maxActionsPerProposal);
    checkProposalTenancy(proposal);
    session.proposals.take();
    try {
      serverProposals.take();
    } catch (err) {
      session.proposals.release();
      throw err;
    }
    return {
      // The run's calls go to this client whatever caller the source passed, metered per run.
      wrapCaller: () => meteredCaller(session, limits.maxOutputBytesPerProposal),
      release() {
        serverProposals.release();
        session.proposals.release();
      },
    };
  };
}
