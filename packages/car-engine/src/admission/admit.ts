/**
 * Admission: the one door every proposal goes through before anything of it
 * runs, whatever its source (`executeProposal`, a planner attempt, a skill,
 * a server's submit). In order:
 *
 * 1. the host's guard (`RuntimeOptions.admission`), first: a proposal the
 *    host refuses throws before anything is logged or any approver asked;
 * 2. the static checks (unknown tools, parameter schemas) and
 * 3. the budget the proposal exceeds on its face;
 * 4. the record begins under a fresh run id (DECISIONS §20): the store's
 *    `beginProposal` (a durable store refuses a second run of an id still
 *    executing, `duplicate_proposal`) and `proposal_received`. What follows
 *    can write events (a transaction warning, an approver's wait), so it
 *    stands on the record;
 * 5. the transaction check in the runtime's mode;
 * 6. tiers and approvals for the whole proposal (DECISIONS §16, §22).
 *
 * Each check from 5 on runs only while the ones before found nothing; any
 * finding rejects the whole proposal and nothing runs.
 */
import { rfc3339 } from "@car/ir";
import type { ActionProposal, Clock, CostBudget, JsonObject } from "@car/ir";
import type { ApprovalGate, TraceGate } from "@car/policy";
import type { TransactionMode } from "@car/verify";
import { EVENT_KINDS } from "../events/event-kinds.ts";
import type { RuntimeStore } from "../store/runtime-store.ts";
import type { ToolRegistry } from "../tools/tool-registry.ts";
import type { Admission, AdmissionFinding } from "./admission.ts";
import type { AdmissionGuard, AdmittedRun } from "./admission-guard.ts";
import type { AdmissionRecord } from "./admission-record.ts";
import { approvalFindings } from "./approvals.ts";
import { budgetFindings } from "./budgets.ts";
import { staticChecks } from "./static-checks.ts";
import { transactionFindings } from "./transaction.ts";

/** What admission holds a proposal to: the runtime's tools, rules and store. */
export interface AdmissionRules {
  readonly tools: ToolRegistry;
  readonly budget: CostBudget | undefined;
  readonly guard: AdmissionGuard | undefined;
  readonly store: RuntimeStore;
  readonly clock: Clock;
  readonly transactionCheck: TransactionMode;
  readonly approvalGate: ApprovalGate | undefined;
  readonly traceGate: TraceGate;
}

/** A check made on the record: it may write events under the run, and wait for people. */
type RecordedCheck = (
  proposal: ActionProposal,
  rules: AdmissionRules,
  admission: Admission,
  record: AdmissionRecord,
) => AdmissionFinding[] | Promise<AdmissionFinding[]>;

const transactionMode: RecordedCheck = (proposal, rules, _admission, record) =>
  rules.transactionCheck === "off"
    ? []
    : transactionFindings(proposal, rules.store.state, rules.transactionCheck, (kind, id, data) => record.emit(kind, id, data));

const tiersAndApprovals: RecordedCheck = (proposal, rules, admission, record) =>
  rules.approvalGate === undefined ? [] : approvalFindings(proposal, rules.approvalGate, rules.tools, rules.traceGate, admission, record);

/**
 * The checks made on the record, in order. SUPERVISION (parking a proposal
 * for a supervisor to decide, failing closed; issue "humans in the loop")
 * is the next step: after `tiersAndApprovals`, so a supervisor sees only
 * what the tiers and the ledger let through. Append it here.
 */
const ON_THE_RECORD: readonly RecordedCheck[] = [transactionMode, tiersAndApprovals];

export interface AdmissionVerdict<R> {
  /** The run `open` made. */
  run: R;
  /** Empty when the proposal is admitted; otherwise every action is to be rejected with them. */
  findings: AdmissionFinding[];
}

/**
 * Admits `proposal`. `open` makes the run once the checks before the record
 * are done, given what they decided and what the guard holds for the run:
 * from then on the run (and the caller, who keeps it) owns that hold and
 * the run's end, however admission ends. A `CarError` the guard or the
 * store throws is the caller's to see: nothing ran.
 */
export async function admit<R extends AdmissionRecord>(
  proposal: ActionProposal,
  rules: AdmissionRules,
  open: (admission: Admission, held: AdmittedRun | undefined) => R,
): Promise<AdmissionVerdict<R>> {
  const held = rules.guard?.(proposal);
  let run: R;
  let admission: Admission;
  try {
    admission = staticChecks(proposal, rules.tools);
    admission.findings.push(...budgetFindings(proposal, rules.budget));
    run = open(admission, held);
  } catch (error) {
    held?.release();
    throw error;
  }
  await rules.store.beginProposal?.({ proposal_id: proposal.id, timestamp: rfc3339(rules.clock.now()) });
  run.emit(EVENT_KINDS.proposalReceived, undefined, { proposal: proposal as unknown as JsonObject, run_id: run.id });
  for (const check of ON_THE_RECORD) {
    if (admission.findings.length > 0) break;
    admission.findings.push(...(await check(proposal, rules, admission, run)));
  }
  return { run, findings: admission.findings };
}
