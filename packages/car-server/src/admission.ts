/**
 * The server's rules for every proposal a session runs, installed once as
 * the session runtime's admission guard (`@car/engine`'s `admission`), so
 * `proposal.submit`, `planner.run` and any later source of actions get the
 * same refusals: the action limit, the tenancy boundary, a proposal slot on
 * the connection and on the server, and a meter on the tool output the run
 * receives — per run (`--max-output-bytes`), and held on the connection's
 * share of the server's bound (held-bytes.ts) until the run ends; and the
 * state the run would commit, held like `state.set` values.
 */
import { type ActionProposal, CarError } from "@car/ir";
import { type AdmissionGuard, type PendingMutation, TerminalToolError, type ToolCaller } from "@car/engine";
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
class OutputMeter {
  /** Bytes of output this run received, all held on the connection's account until the run ends. */
  received = 0;
  constructor(
    private readonly session: Session,
    private readonly max: number,
  ) {}

  readonly caller: ToolCaller = async (call, signal) => {
    let bytes = 0;
    let answer: Awaited<ReturnType<ToolCaller>>;
    try {
      answer = await callClientTool(this.session, call, signal, (n) => {
        bytes += n;
      });
    } catch (err) {
      // The client said terminal: this connection halts (reference § A.7) until it reconnects or clears the latch.
      if (err instanceof TerminalToolError) this.session.halted = true;
      throw err;
    }
    this.received += bytes;
    if (this.received > this.max) {
      throw new TerminalToolError(
        `budget_exceeded: the proposal's tool outputs reached ${this.received} bytes, over the ${this.max}-byte limit (--max-output-bytes)`,
      );
    }
    try {
      this.session.held.take(bytes, "tool output");
    } catch (err) {
      this.received -= bytes;
      throw new TerminalToolError(`budget_exceeded: ${(err as Error).message}`);
    }
    return answer;
  };

  release(): void {
    this.session.held.release(this.received);
  }
}

/** Bytes of the value each key ends with after `writes` (0 for a delete): what the state would hold for them. */
function writtenSizes(writes: readonly PendingMutation[]): Map<string, number> {
  const sizes = new Map<string, number>();
  for (const { key, mutation } of writes) sizes.set(key, mutation.op === "set" ? Buffer.byteLength(JSON.stringify(mutation.value ?? null)) : 0);
  return sizes;
}

/**
 * State a proposal writes is held like a `state.set` value (held-bytes.ts):
 * its values count against the connection's share, beside what the
 * connection holds already, and against the server's bound, replacing what
 * their keys held. Past either, the commit is refused with `budget_exceeded`.
 */
function checkStateWrites(session: Session, writes: readonly PendingMutation[]): void {
  if (writes.length === 0) return;
  const sizes = writtenSizes(writes);
  let total = 0;
  for (const bytes of sizes.values()) total += bytes;
  const what = "the proposal's state writes";
  try {
    session.held.check(total, what);
    session.options.heldState.check(session.stateHolder, sizes, session.options.limits.maxHeldBytesPerConnection, what);
  } catch (err) {
    // The refusal names the keys, as a store's conflict does.
    if (err instanceof CarError) throw new CarError(err.code, err.message, { ...err.details, keys: [...sizes.keys()] });
    throw err;
  }
}

/** The whole-proposal rejection of a halted connection. */
export const HALTED =
  "session halted: a tool reported a terminal failure on this connection; reconnect, or clear the latch with session.clear_halt (an operator's connection)";

export function serverAdmission(session: Session): AdmissionGuard {
  return (proposal) => {
    const { limits, serverProposals, oversight } = session.options;
    checkActionCount(proposal, limits.maxActionsPerProposal);
    checkProposalTenancy(proposal);
    if (session.halted) return { refusal: HALTED, release() {} };
    session.proposals.take();
    try {
      serverProposals.take();
    } catch (err) {
      session.proposals.release();
      throw err;
    }
    const meter = new OutputMeter(session, limits.maxOutputBytesPerProposal);
    const status = (state: string): void =>
      oversight.host.emit("status_changed", () => ({
        session_id: session.id,
        ...(session.options.agentId !== undefined ? { agent_id: session.options.agentId } : {}),
        status: state,
        proposal_id: proposal.id,
      }));
    status("running");
    return {
      // The run's calls go to this client whatever caller the source passed, metered per run.
      wrapCaller: () => meter.caller,
      committing: (writes) => {
        checkStateWrites(session, writes);
        // The agent's session facts ride the commit about to happen: its transaction, its sync.
        session.persistAgent(true);
      },
      committed: (writes) => session.options.heldState.record(session.stateHolder, writtenSizes(writes)),
      release() {
        meter.release();
        serverProposals.release();
        session.proposals.release();
        status(session.proposals.used > 0 ? "running" : "idle");
        // What the run added to the agent's session goes to the log (DECISIONS §21); a failed write is kept for the next.
        try {
          session.persistAgent();
        } catch {
          // Retried with the agent's next run or at disconnect.
        }
      },
    };
  };
}
