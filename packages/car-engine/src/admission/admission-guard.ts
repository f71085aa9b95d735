/**
 * The host's say at admission. A runtime embedded in a server must hold
 * every proposal to the server's rules — tenancy, size limits, slots —
 * whatever the proposal's source: a submit, a planner attempt, a skill. The
 * host gives one guard to the runtime, and `executeProposal` calls it for
 * every proposal it admits, so no source can forget it.
 */
import type { ActionProposal } from "@car/ir";
import type { PendingMutation } from "../store/working-state.ts";
import type { ToolCaller } from "../tools/tool-call.ts";

/** What an admitted proposal holds until its run ends. */
export interface AdmittedRun {
  /** The run's tool caller, given the one its source passed: a wrapper of it, or a replacement (`car serve` sends every call to its client, metered). */
  wrapCaller?(caller: ToolCaller): ToolCaller;
  /**
   * Refuses the proposal with the normal whole-proposal rejection (every
   * action `rejected` with this message, nothing dispatched) rather than an
   * error: e.g. a halted session (reference websocket-core.md § A.7).
   */
  refusal?: string;
  /**
   * Called once the run's actions are done and it would commit, with the
   * state writes it would commit (e.g. for a server to count the values it
   * would then hold). Throwing a `budget_exceeded` `CarError` refuses them
   * like a store's conflict: one `commit_refused` event, the run ends rolled
   * back (`RunReport.refusal`), nothing written.
   */
  committing?(writes: readonly PendingMutation[]): void;
  /** The store committed the run's writes (`committing` passed them; a store may still refuse a commit). */
  committed?(writes: readonly PendingMutation[]): void;
  /** Called once when the run ends, however it ends. */
  release(): void;
}

/**
 * Checks a parsed proposal before anything else of admission. Throws a
 * `CarError` to refuse it (nothing runs, nothing is logged); returns what
 * the run holds, or nothing.
 */
export type AdmissionGuard = (proposal: ActionProposal) => AdmittedRun | undefined;
