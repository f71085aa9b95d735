/**
 * The compensation phase as a durable unit of its own. It starts after the
 * proposal's rolled-back outcome is committed (so what ran, and that state
 * was restored, is already on record), and it is registered with the store
 * as the run `<proposal id>#compensation`: a durable store keeps it
 * "executing" until it ends, so a crash mid-compensation leaves it visible —
 * `recover()` reports it interrupted — while each step's events, which
 * belong to a proposal no longer open, are written as they happen. The log
 * then holds everything needed to resume: the plan (`compensation_planned`)
 * and the steps that already succeeded.
 */
import { CarError, parseProposalWithGraph, rfc3339 } from "@car/ir";
import type { Clock, JsonObject, ProposalResult } from "@car/ir";
import type { EventLog } from "../events/event-log.ts";
import type { CarEvent } from "../events/event.ts";
import type { RuntimeStore } from "../store/runtime-store.ts";
import { planFromRecord } from "./compensation-plan.ts";
import type { CompensationPlan } from "./compensation-plan.ts";
import { COMPENSATION_EVENTS } from "../events/event-kinds.ts";
import type { CompensationReport } from "./compensation-run.ts";
import { withCompensation } from "./compensated-result.ts";

/** What a compensation phase came to, and what it spent. */
export interface CompensationOutcome {
  report: CompensationReport;
  toolCalls: number;
  retries: number;
}

/** The run a phase belongs to (`ProposalRun`): its events so far, and its way of running a plan through the gates and the dispatcher. */
export interface CompensatingRun {
  readonly appended: readonly CarEvent[];
  compensate(plan: CompensationPlan, timeoutMs: number, done?: ReadonlySet<string>, planned?: boolean): Promise<CompensationOutcome>;
}

/** The store run a compensation phase is recorded under. */
export function compensationRunId(proposal_id: string): string {
  return `${proposal_id}#compensation`;
}

/** Runs `plan` as its own store run; returns what it came to. */
export async function runPhase(
  store: RuntimeStore,
  clock: Clock,
  run: CompensatingRun,
  plan: CompensationPlan,
  timeoutMs: number,
  proposal_id: string,
  resume?: { done: ReadonlySet<string> },
): Promise<CompensationOutcome> {
  const id = compensationRunId(proposal_id);
  await store.beginProposal?.({ proposal_id: id, timestamp: rfc3339(clock.now()) });
  const from = run.appended.length;
  const outcome = await run.compensate(plan, timeoutMs, resume?.done, resume !== undefined);
  await store.commitProposal({ proposal_id: id, outcome: "committed", mutations: [], reads: [], assumptions: [], events: run.appended.slice(from) });
  return outcome;
}

/** `result` after its compensation: per-action marks, and the compensation's calls in its cost. */
export function compensatedResult(result: ProposalResult, outcome: CompensationOutcome): ProposalResult {
  result.cost.tool_calls += outcome.toolCalls;
  result.cost.retries += outcome.retries;
  return withCompensation(result, outcome.report);
}

/** A compensation phase the log shows planned and never completed. */
export interface PendingCompensation {
  proposal_id: string;
  /** Forward actions whose compensation already succeeded. */
  done: string[];
  /** Forward actions whose compensation is still to run (or to re-run: it started, and nothing says how it ended). */
  remaining: string[];
}

/** Every compensation phase the log shows planned and not completed. */
export function pendingCompensations(events: EventLog): PendingCompensation[] {
  const completed = new Set(events.query({ kinds: [COMPENSATION_EVENTS.completed] }).map((e) => e.proposal_id));
  const out: PendingCompensation[] = [];
  for (const planned of events.query({ kinds: [COMPENSATION_EVENTS.planned] })) {
    const id = planned.proposal_id;
    if (id === null || completed.has(id)) continue;
    const done = new Set(events.query({ proposal_id: id, kinds: [COMPENSATION_EVENTS.succeeded] }).map((e) => e.action_id!));
    const steps = ((planned.data["steps"] ?? []) as JsonObject[]).map((s) => s["action_id"] as string);
    out.push({ proposal_id: id, done: steps.filter((s) => done.has(s)), remaining: steps.filter((s) => !done.has(s)) });
  }
  return out;
}

/** What `resumeCompensation` needs from the log: the proposal, its plan, and what is done. */
export function resumable(
  events: EventLog,
  proposal_id: string,
): { proposal: ReturnType<typeof parseProposalWithGraph>; plan: CompensationPlan; done: Set<string> } {
  const pending = pendingCompensations(events).find((p) => p.proposal_id === proposal_id);
  if (pending === undefined) throw new CarError("not_found", `no interrupted compensation of proposal '${proposal_id}' is in the log`);
  const received = events.query({ proposal_id, kinds: ["proposal_received"] })[0];
  const planned = events.query({ proposal_id, kinds: [COMPENSATION_EVENTS.planned] })[0]!;
  if (received === undefined) throw new CarError("not_found", `proposal '${proposal_id}' is not in the log (retention may have removed it)`);
  const proposal = parseProposalWithGraph(received.data["proposal"]);
  return { proposal, plan: planFromRecord(proposal.proposal.actions, proposal.graph.indexOf, planned.data), done: new Set(pending.done) };
}

export type { CompensationReport };
