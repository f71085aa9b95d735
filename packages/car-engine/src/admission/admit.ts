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
 * 5. the supervisor (`RuntimeOptions.supervisor`): a proposal its
 *    subscribers watch is parked until one decides (failing closed at its
 *    deadline). It comes before the tiers because `escalate` hands every
 *    action to the approval ledger, and `allow` is no bypass: every check
 *    after it still runs;
 * 6. the transaction check in the runtime's mode;
 * 7. tiers and approvals for the whole proposal (DECISIONS §16, §22); a
 *    proposal submitted with a wait waits for its approvals here.
 *
 * A guard's `refusal` (a halted session) is a finding like any other. Each check from 5 on runs only while the ones before found nothing; any
 * finding rejects the whole proposal and nothing runs.
 */
import { rfc3339 } from "@car/ir";
import type { ActionProposal, Clock, CostBudget, JsonObject } from "@car/ir";
import type { ApprovalGate, TraceGate } from "@car/policy";
import type { TransactionMode } from "@car/verify";
import { EVENT_KINDS } from "../events/event-kinds.ts";
import type { RuntimeStore } from "../store/runtime-store.ts";
import type { ToolRegistry } from "../tools/tool-registry.ts";
import { type SupervisionOutcome, supervise } from "./supervision.ts";
import type { Supervisor } from "../supervision/supervisor.ts";
import type { Admission, AdmissionFinding } from "./admission.ts";
import type { AdmissionGuard, AdmittedRun } from "./admission-guard.ts";
import type { AdmissionRecord } from "./admission-record.ts";
import { type ApprovalAdmissionContext, approvalFindings } from "./approvals.ts";
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
  readonly supervisor: Supervisor | undefined;
  /** Who submitted this proposal, and whether it may wait for its approvals. */
  readonly submitted: ApprovalAdmissionContext;
}

/** What the checks on the record learn from each other: a supervisor's `escalate`. */
interface OnTheRecord {
  escalated: boolean;
}

/** A check made on the record: it may write events under the run, and wait for people. */
type RecordedCheck = (
  proposal: ActionProposal,
  rules: AdmissionRules,
  admission: Admission,
  record: AdmissionRecord,
  learned: OnTheRecord,
) => AdmissionFinding[] | Promise<AdmissionFinding[]>;

const supervision: RecordedCheck = (proposal, rules, _admission, record, learned) => {
  const request = {
    proposal,
    run_id: record.id,
    session_id: rules.submitted.session_id,
    signal: rules.submitted.signal,
    schemaOf: (tool: string) => rules.tools.get(tool)?.schema,
  };
  const outcome = supervise(rules.supervisor!, request, rules.clock, (kind, data) => record.emit(kind, undefined, data));
  return outcome instanceof Promise ? outcome.then((o) => supervised(o, rules, learned)) : supervised(outcome, rules, learned);
};

/** What admission learns from the supervisor's outcome, and what it finds in it. */
function supervised(outcome: SupervisionOutcome, rules: AdmissionRules, learned: OnTheRecord): AdmissionFinding[] {
  learned.escalated = outcome.escalated;
  if (outcome.escalated && rules.approvalGate === undefined)
    return [{ index: -1, message: "escalated by a supervisor: this runtime has no approval gate to decide it", code: "approval_denied" }];
  return outcome.findings;
}

const transactionMode: RecordedCheck = (proposal, rules, _admission, record, _learned) =>
  transactionFindings(proposal, rules.store.state, rules.transactionCheck, (kind, id, data) => record.emit(kind, id, data));

const tiersAndApprovals: RecordedCheck = (proposal, rules, admission, record, learned) =>
  approvalFindings(proposal, rules.approvalGate!, rules.tools, rules.traceGate, admission, record, rules.submitted, learned.escalated);

/**
 * The checks made on the record, in order (see the list at the top), each
 * with whether the runtime has anything for it to do: one it has nothing
 * for (no supervisor, no transaction check, no approval gate) finds nothing
 * and is not called.
 */
const ON_THE_RECORD: readonly { check: RecordedCheck; applies: (rules: AdmissionRules) => boolean }[] = [
  { check: supervision, applies: (rules) => rules.supervisor !== undefined },
  { check: transactionMode, applies: (rules) => rules.transactionCheck !== "off" },
  { check: tiersAndApprovals, applies: (rules) => rules.approvalGate !== undefined },
];

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
    if (held?.refusal !== undefined) admission.findings.push({ index: -1, message: held.refusal, code: "policy_denied" });
    run = open(admission, held);
  } catch (error) {
    held?.release();
    throw error;
  }
  if (rules.store.beginProposal !== undefined)
    await rules.store.beginProposal({ proposal_id: proposal.id, run_id: run.id, timestamp: rfc3339(rules.clock.now()) });
  run.emit(EVENT_KINDS.proposalReceived, undefined, { proposal: proposal as unknown as JsonObject });
  const learned: OnTheRecord = { escalated: false };
  for (let i = 0; i < ON_THE_RECORD.length && admission.findings.length === 0; i++) {
    const { check, applies } = ON_THE_RECORD[i]!;
    if (!applies(rules)) continue;
    const found = check(proposal, rules, admission, run, learned);
    for (const finding of found instanceof Promise ? await found : found) admission.findings.push(finding);
  }
  return { run, findings: admission.findings };
}
