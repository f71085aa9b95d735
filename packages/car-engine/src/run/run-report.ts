/**
 * How a run went, as data beside the wire `ProposalResult`: the transports
 * (`car run`'s exit status and lines, the server's error replies, the HTML
 * run report) read this and never the result's prose. It is built from
 * what the engine decided as it decided it — the admission findings, the
 * stage of each rejection, the approval gate's verdicts, the store's
 * refusal — so reading it costs nothing that grows with the log.
 */
import type { CarError, CarErrorCode, ProposalResult } from "@car/ir";
import type { GatedAction } from "../gates/gated-action.ts";

/**
 * `committed`: the run's writes landed (some actions may still have failed
 * or been skipped by their own `failure_behavior`). `rolled_back`: it
 * aborted and its writes were discarded. `rejected`: admission refused it
 * and nothing ran. `refused`: it ran, and its commit was refused — by the
 * store for a conflict (`stale_read`, `write_conflict`), or by the host for
 * what its writes would make it hold (`budget_exceeded`); every change was
 * rolled back.
 */
export type RunOutcomeKind = "committed" | "rolled_back" | "rejected" | "refused";

/** A commit the store (or the host) refused: its code, the keys, and the sentence that says so. */
export interface CommitRefusal {
  code: "stale_read" | "write_conflict" | "budget_exceeded";
  keys: string[];
  /** `commit refused: …: <keys> — every change was rolled back (<code>)`. */
  message: string;
}

export interface RunReport {
  proposal_id: string;
  /** The run id admission began the record under (DECISIONS §20). */
  run_id: string;
  outcome: RunOutcomeKind;
  /** The `CarError` code that says what went wrong, when something did (its JSON-RPC number and exit status are in `ERROR_CODES`). */
  code?: CarErrorCode;
  /** Every action the approval gate held, in the order it held them. */
  gated: GatedAction[];
  /** Present when `outcome` is `refused`. */
  refusal?: CommitRefusal;
  /** `skip` actions whose tool failed: they do not fail the run (DECISIONS §14), but a report says them. */
  skipped_failures: string[];
}

/** What `executeProposalWithReport` returns: the wire result, and the report beside it. */
export interface ProposalOutcome {
  result: ProposalResult;
  report: RunReport;
}

/** The refusal the store's `CarError` describes. */
export function refusalOf(error: CarError): CommitRefusal {
  const keys = (error.details["keys"] as string[] | undefined) ?? [];
  return { code: error.code as CommitRefusal["code"], keys, message: `${error.message} — every change was rolled back (${error.code})` };
}

/**
 * The code for a run that went through execution: a terminal failure, then
 * a failure, then a rejection (by the stage that rejected: a policy or
 * trace rule, the approval gate, anything else), then an abort that rolled
 * back succeeded work. `undefined` when it went cleanly.
 */
export function executionCode(result: ProposalResult, rejectedAt: ReadonlyMap<number, string>): CarErrorCode | undefined {
  const results = result.results;
  if (results.some((r) => r.terminal === true)) return "terminal_failure";
  if (results.some((r) => r.status === "failed")) return "tool_error";
  if (rejectedAt.size > 0) {
    const stages = new Set(rejectedAt.values());
    return stages.has("policy") ? "policy_denied" : stages.has("approval") ? "approval_denied" : "verification_failed";
  }
  if (results.some((r) => r.rolled_back === true)) return "cancelled";
  return undefined;
}
