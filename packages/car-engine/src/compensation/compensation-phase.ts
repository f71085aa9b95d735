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
import { COMPENSATION_EVENTS, EVENT_KINDS } from "../events/event-kinds.ts";
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
  /** The run's id (DECISIONS §20): the phase is that run's compensation. */
  readonly id: string;
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
  await store.beginProposal?.({ proposal_id: id, run_id: run.id, timestamp: rfc3339(clock.now()) });
  const from = run.appended.length;
  const outcome = await run.compensate(plan, timeoutMs, resume?.done, resume !== undefined);
  await store.commitProposal({
    proposal_id: id,
    run_id: run.id,
    outcome: "committed",
    mutations: [],
    reads: [],
    assumptions: [],
    events: run.appended.slice(from),
  });
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

/**
 * A proposal id's events grouped by run, oldest run first (DECISIONS §20).
 * A compensation event names its run (`data.run_id`), since a phase resumed
 * later is appended after other runs of the same id; any other event
 * belongs to the run whose `proposal_received` precedes it (a durable store
 * runs one proposal id at a time, and a log written before every event
 * named its run holds events that name none). Events before the first
 * `proposal_received` (retention cut it) make a run of their own.
 */
function runsOf(events: readonly CarEvent[]): CarEvent[][] {
  const runs = new Map<string, CarEvent[]>();
  let current: CarEvent[] | undefined;
  const runOf = (id: string): CarEvent[] => {
    let run = runs.get(id);
    if (run === undefined) runs.set(id, (run = []));
    return run;
  };
  for (const e of events) {
    const named = e.data["run_id"];
    if (e.kind === EVENT_KINDS.proposalReceived) current = runOf(typeof named === "string" ? named : `#${e.seq}`);
    else if (typeof named === "string" && e.kind.startsWith("compensation_")) {
      runOf(named).push(e);
      continue;
    }
    (current ??= runOf("")).push(e);
  }
  return [...runs.values()];
}

/** The compensation one run planned and never completed, if any. */
function pendingIn(proposal_id: string, run: readonly CarEvent[]): PendingCompensation | undefined {
  const planned = run.find((e) => e.kind === COMPENSATION_EVENTS.planned);
  if (planned === undefined || run.some((e) => e.kind === COMPENSATION_EVENTS.completed)) return undefined;
  const done = new Set(run.filter((e) => e.kind === COMPENSATION_EVENTS.succeeded).map((e) => e.action_id!));
  const steps = ((planned.data["steps"] ?? []) as JsonObject[]).map((s) => s["action_id"] as string);
  return { proposal_id, done: steps.filter((s) => done.has(s)), remaining: steps.filter((s) => !done.has(s)) };
}

/** Every compensation phase the log shows planned and not completed, per run (a later run of the same id neither hides nor completes it). */
export function pendingCompensations(events: EventLog): PendingCompensation[] {
  const ids = new Set(events.query({ kinds: [COMPENSATION_EVENTS.planned] }).map((e) => e.proposal_id));
  const out: PendingCompensation[] = [];
  for (const id of ids) {
    if (id === null) continue;
    for (const run of runsOf(events.query({ proposal_id: id }))) {
      const pending = pendingIn(id, run);
      if (pending !== undefined) out.push(pending);
    }
  }
  return out;
}

/**
 * What `resumeCompensation` needs, from `events` (the proposal id's events,
 * as verification read them): the newest run whose compensation was cut
 * short — its proposal, its plan, and what is done.
 */
export function resumable(
  events: readonly CarEvent[],
  proposal_id: string,
): { proposal: ReturnType<typeof parseProposalWithGraph>; run_id: string | undefined; plan: CompensationPlan; done: Set<string> } {
  const run = runsOf(events).findLast((r) => pendingIn(proposal_id, r) !== undefined);
  if (run === undefined) throw new CarError("not_found", `no interrupted compensation of proposal '${proposal_id}' is in the log`);
  const received = run[0]!;
  if (received.kind !== EVENT_KINDS.proposalReceived)
    throw new CarError("not_found", `proposal '${proposal_id}' is not in the log (retention may have removed it)`);
  const planned = run.find((e) => e.kind === COMPENSATION_EVENTS.planned)!;
  const proposal = parseProposalWithGraph(received.data["proposal"]);
  const run_id = received.data["run_id"];
  return {
    proposal,
    run_id: typeof run_id === "string" ? run_id : undefined,
    plan: planFromRecord(proposal.proposal.actions, proposal.graph.indexOf, planned.data),
    done: new Set(pendingIn(proposal_id, run)!.done),
  };
}

export type { CompensationReport };
