/**
 * One execution of one admitted proposal, assembled from its parts: the
 * scheduler (`schedule.ts`) drives the per-action pipeline (`pipeline.ts`),
 * which dispatches tool calls (`dispatch.ts`) and records what each action
 * came to (`outcomes.ts`); every step is an audit event (`run-events.ts`).
 *
 * State is a `WorkingState` overlay: nothing reaches the store until the
 * proposal commits, so an abort discards the overlay and the store is
 * exactly as it was before the proposal (the pre-proposal snapshot).
 */
import { emptyMap } from "@car/ir";
import type { ActionProposal, CostBudget, DependencyGraph, JsonObject, ProposalResult } from "@car/ir";
import type { PolicyEngine } from "@car/policy";
import { EVENT_KINDS } from "../events/event.ts";
import type { CarEvent, EventKind } from "../events/event.ts";
import type { RuntimeStore } from "../store/runtime-store.ts";
import { WorkingState } from "../store/working-state.ts";
import type { ToolCallback } from "../tools/handler.ts";
import type { ToolRegistry } from "../tools/tool-registry.ts";
import type { Admission } from "./admission.ts";
import { CostMeter } from "./cost-meter.ts";
import { Dispatcher } from "./dispatch.ts";
import type { DispatchEnvironment } from "./dispatch.ts";
import { Outcomes } from "./outcomes.ts";
import type { RunOutcome } from "./outcomes.ts";
import { ActionPipeline } from "./pipeline.ts";
import type { PipelineEnvironment } from "./pipeline.ts";
import { RunEvents } from "./run-events.ts";
import { Scheduler } from "./schedule.ts";

/** What a run borrows from its runtime. */
export interface RunEnvironment extends DispatchEnvironment, PipelineEnvironment {
  readonly tools: ToolRegistry;
  readonly policies: PolicyEngine;
  readonly store: RuntimeStore;
}

export interface RunOptions {
  dispatch: ToolCallback | undefined;
  session_id: string | null;
  budget: CostBudget | undefined;
  /** 0 = unlimited. */
  maxConcurrency: number;
  signal: AbortSignal | undefined;
}

const NO_DATA: JsonObject = Object.freeze(emptyMap()) as JsonObject;

export class ProposalRun {
  readonly #env: RunEnvironment;
  readonly #proposal: ActionProposal;
  readonly #signal: AbortSignal | undefined;
  readonly #working: WorkingState;
  readonly #events: RunEvents;
  readonly #meter: CostMeter;
  readonly #scheduler: Scheduler;
  readonly #outcomes: Outcomes;
  readonly #pipeline: ActionPipeline;

  constructor(env: RunEnvironment, options: RunOptions, proposal: ActionProposal, graph: DependencyGraph, admission: Admission) {
    this.#env = env;
    this.#proposal = proposal;
    this.#signal = options.signal;
    this.#working = new WorkingState(env.store.state);
    this.#events = new RunEvents(proposal.id, env.store.events, env.clock);
    this.#meter = new CostMeter(options.budget, env.clock);
    const scheduler = new Scheduler(graph, options.maxConcurrency, (reason) => dispatcher.cancelAll(reason));
    const dispatcher = new Dispatcher(env, options.dispatch, options.session_id, this.#meter, scheduler, this.#events);
    this.#scheduler = scheduler;
    this.#outcomes = new Outcomes(proposal.id, proposal.actions, this.#events, this.#working, env.tools, env.clock, scheduler);
    this.#pipeline = new ActionPipeline(env, {
      actions: proposal.actions,
      graph,
      hasRefs: admission.hasRefs,
      working: this.#working,
      events: this.#events,
      outcomes: this.#outcomes,
      scheduler,
      meter: this.#meter,
      dispatcher,
    });
  }

  /** Events appended for this proposal so far, in order (for the commit). */
  get appended(): readonly CarEvent[] {
    return this.#events.appended;
  }

  get aborted(): boolean {
    return this.#scheduler.abortReason !== undefined;
  }

  emit(kind: EventKind, action_id: string | undefined, data: JsonObject): void {
    this.#events.emit(kind, action_id, data);
  }

  /** Rejects every action at admission: nothing runs. */
  rejectAll(findings: readonly { index: number; message: string }[]): ProposalResult {
    this.#meter.start();
    return this.#outcomes.rejectAll(findings, this.#meter);
  }

  /** Runs every action; resolves once nothing is running any more. */
  execute(): Promise<void> {
    this.#meter.start();
    for (const action of this.#proposal.actions) this.#events.emit(EVENT_KINDS.actionValidated, action.id, NO_DATA);
    return this.#scheduler.run(this.#pipeline, this.#signal);
  }

  /** Marks what never ran, applies rollback marks, emits the closing events and builds the result. */
  finish(): ProposalResult {
    const { abortReason, budgetReason } = this.#scheduler;
    this.#outcomes.skipUnfinished(abortReason !== undefined ? `not run: ${abortReason}` : `not run: ${budgetReason ?? "the proposal stopped"}`);
    if (abortReason !== undefined) return this.rollback(abortReason);
    this.#outcomes.emitStateChanges(this.#env.store.state);
    return this.#outcomes.complete("committed", undefined, this.#meter);
  }

  /** Turns the outcome into a rolled-back one (an abort, or a commit the store refused). */
  rollback(reason: string): ProposalResult {
    this.#scheduler.abortReason ??= reason;
    this.#events.emit(EVENT_KINDS.proposalRolledBack, undefined, { reason, discarded_writes: this.#working.mutations.length });
    return this.#outcomes.complete("rolled_back", reason, this.#meter);
  }

  /** The commit for this run's outcome. */
  commitInput(outcome: RunOutcome) {
    return {
      proposal_id: this.#proposal.id,
      outcome,
      mutations: outcome === "committed" ? this.#working.mutations : [],
      reads: this.#working.reads,
      assumptions: this.#pipeline.assumptions,
      events: this.#events.appended,
    };
  }
}
