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
import type { ApprovalWait } from "../gates/approval-wait.ts";
import { emptyMap, InterpolationBudget, resolveOutputRefs, setOwn } from "@car/ir";
import { compensationActionIndices } from "@car/ir/internal";
import type { CarError } from "@car/ir";
import type { ActionProposal, CostBudget, DependencyGraph, JsonObject, ProposalResult } from "@car/ir";
import { dispatchStep } from "../compensation/compensation-dispatch.ts";
import type { CompensationPath } from "../compensation/compensation-dispatch.ts";
import { planCompensation, referencesIn } from "../compensation/compensation-plan.ts";
import type { CompensationPlan, CompensationStep } from "../compensation/compensation-plan.ts";
import { runCompensation } from "../compensation/compensation-run.ts";
import type { CompensationOutcome } from "../compensation/compensation-phase.ts";
import { ActionFailure } from "../tools/action-failure.ts";
import type { PolicyEngine } from "@car/policy";
import { EVENT_KINDS, type EventData, type EventKind } from "../events/event-kinds.ts";
import type { CarEvent } from "../events/event.ts";
import type { RuntimeStore } from "../store/runtime-store.ts";
import { type PendingMutation, WorkingState } from "../store/working-state.ts";
import type { ToolCaller } from "../tools/tool-call.ts";
import type { ToolRegistry } from "../tools/tool-registry.ts";
import type { Admission, AdmissionFinding } from "../admission/admission.ts";
import type { AdmissionRecord } from "../admission/admission-record.ts";
import { gatedAction, type GatedAction } from "../gates/gated-action.ts";
import { executionCode, refusalOf, type CommitRefusal, type RunOutcomeKind, type RunReport } from "./run-report.ts";
import { CostMeter } from "./cost-meter.ts";
import { Dispatcher } from "./dispatch.ts";
import type { DispatchEnvironment } from "./dispatch.ts";
import { Outcomes, SUCCEEDED } from "./outcomes.ts";
import type { RunOutcome } from "./outcomes.ts";
import { ActionPipeline } from "./pipeline.ts";
import type { PipelineEnvironment } from "./pipeline.ts";
import { RunEvents } from "./run-events.ts";
import { RunTracer, type TraceSettings } from "../telemetry/run-tracer.ts";
import { reasonText, Scheduler } from "./schedule.ts";

/** What a run borrows from its runtime. */
export interface RunEnvironment extends DispatchEnvironment, PipelineEnvironment {
  readonly tools: ToolRegistry;
  readonly policies: PolicyEngine;
  readonly store: RuntimeStore;
  /** Traces runs when set (OpenTelemetry); absent, tracing costs nothing. */
  readonly tracer: TraceSettings | undefined;
}

export interface RunOptions {
  /** This execution's own id, minted by the runtime: what "this proposal" means to trace rules (DECISIONS §20). */
  run_id: string;
  /** Where calls to tools without a handler go. */
  caller: ToolCaller | undefined;
  session_id: string | null;
  budget: CostBudget | undefined;
  /** 0 = unlimited. */
  maxConcurrency: number;
  signal: AbortSignal | undefined;
  /** Wait for approvals instead of rejecting (admission and, for resolved forms, dispatch). */
  approvalWait?: ApprovalWait | undefined;
}

const NO_DATA: EventData["action_validated"] = Object.freeze(emptyMap<never>());

export class ProposalRun implements AdmissionRecord {
  /** Every action the approval gate held, at admission, at dispatch or as a compensation step (for the report). */
  readonly gated: GatedAction[] = [];
  readonly #env: RunEnvironment;
  readonly #options: RunOptions;
  readonly #graph: DependencyGraph;
  readonly #compensations: ReadonlySet<number>;
  readonly #hasRefs: Uint8Array;
  readonly #proposal: ActionProposal;
  readonly #signal: AbortSignal | undefined;
  readonly #working: WorkingState;
  readonly #events: RunEvents;
  readonly #meter: CostMeter;
  readonly #scheduler: Scheduler;
  readonly #outcomes: Outcomes;
  readonly #pipeline: ActionPipeline;
  readonly #tracer: RunTracer | undefined;
  /** The store's refusal of this run's commit, once it refused. */
  #refusal: CommitRefusal | undefined;

  constructor(env: RunEnvironment, options: RunOptions, proposal: ActionProposal, graph: DependencyGraph, admission: Admission) {
    this.#env = env;
    this.#options = options;
    this.#graph = graph;
    this.#compensations = compensationActionIndices(proposal.actions);
    this.#hasRefs = admission.hasRefs;
    this.#proposal = proposal;
    this.#signal = options.signal;
    this.#working = new WorkingState(env.store.state);
    const tracer = env.tracer === undefined ? undefined : new RunTracer(env.tracer, proposal);
    this.#tracer = tracer;
    this.#events = new RunEvents(proposal.id, options.run_id, env.store.events, env.clock, tracer === undefined ? undefined : (event) => tracer.observe(event));
    this.#meter = new CostMeter(options.budget, env.clock);
    const scheduler = new Scheduler(graph, options.maxConcurrency, (reason) => dispatcher.cancelAll(reason));
    const dispatcher = new Dispatcher(env, options.caller, options.session_id, this.#meter, scheduler, this.#events, tracer);
    this.#scheduler = scheduler;
    this.#outcomes = new Outcomes(proposal.id, proposal.actions, this.#events, this.#working, env.tools, env.clock, scheduler);
    this.#pipeline = new ActionPipeline(env, {
      runId: options.run_id,
      actions: proposal.actions,
      compensations: this.#compensations,
      graph,
      hasRefs: admission.hasRefs,
      approvals: admission.approvals,
      gated: this.gated,
      working: this.#working,
      events: this.#events,
      outcomes: this.#outcomes,
      scheduler,
      meter: this.#meter,
      dispatcher,
      approvalWait:
        options.approvalWait === undefined
          ? undefined
          : {
              wait: options.approvalWait,
              place: { run_id: options.run_id, proposal_id: proposal.id, session_id: options.session_id, signal: options.signal },
            },
    });
  }

  /** This execution's run id. */
  get id(): string {
    return this.#options.run_id;
  }

  /** Events appended for this proposal so far, in order (for the commit). */
  get appended(): readonly CarEvent[] {
    return this.#events.appended;
  }

  get aborted(): boolean {
    return this.#scheduler.abortReason !== undefined;
  }

  /** The state writes the run made, in order: what a commit would write. */
  get writes(): readonly PendingMutation[] {
    return this.#working.mutations;
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
    const actions = this.#proposal.actions;
    for (let i = 0; i < actions.length; i++) this.#events.emit(EVENT_KINDS.actionValidated, actions[i]!.id, NO_DATA);
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

  /** Ends the run's trace (after the commit, whose refusal can still change the outcome). */
  endTrace(): void {
    this.#tracer?.end();
  }

  /**
   * The store refused the commit: the `state_changed` events and the
   * `committed` completion describe changes that never landed, so they are
   * taken back; one `commit_refused` event names the code and keys, and the
   * run ends rolled back with the refusal as its reason.
   */
  refuseCommit(error: CarError): ProposalResult {
    this.#events.retract((e) => e.kind === EVENT_KINDS.stateChanged || (e.kind === EVENT_KINDS.proposalCompleted && e.data["outcome"] === "committed"));
    this.#refusal = refusalOf(error);
    this.#events.emit(EVENT_KINDS.commitRefused, undefined, { code: this.#refusal.code, keys: this.#refusal.keys, reason: error.message });
    return this.rollback(error.message);
  }

  /**
   * How the run went, as data (`RunReport`): `findings` are admission's,
   * when it rejected the proposal; a refused commit is known from
   * `refuseCommit`.
   */
  report(result: ProposalResult, findings: readonly AdmissionFinding[]): RunReport {
    const outcome: RunOutcomeKind = findings.length > 0 ? "rejected" : this.#refusal !== undefined ? "refused" : this.aborted ? "rolled_back" : "committed";
    const report: RunReport = {
      proposal_id: this.#proposal.id,
      run_id: this.id,
      outcome,
      gated: this.gated,
      skipped_failures: this.#outcomes.skippedFailures.map((i) => this.#proposal.actions[i]!.id),
    };
    const code = findings.length > 0 ? findings[0]!.code : this.#refusal !== undefined ? this.#refusal.code : executionCode(result, this.#outcomes.rejectedAt);
    if (code !== undefined) report.code = code;
    if (this.#refusal !== undefined) report.refusal = this.#refusal;
    return report;
  }

  /**
   * What a rollback with compensation has to do now: the succeeded forward
   * actions, undone in reverse completion order. A compensation action's
   * `$id.output` references are resolved here, against the forward run's
   * outputs, so the recorded plan is enough to resume it after a crash.
   */
  compensationPlan(): CompensationPlan {
    const completed = this.#outcomes.completed.filter((i) => !this.#compensations.has(i));
    const plan = planCompensation(this.#proposal.actions, completed, this.#graph.indexOf);
    const outcomes = this.#outcomes;
    // The undo is held to the same interpolation bound as the forward run: what its references
    // may put into the steps' parameters (and so into the recorded plan) is bounded in all.
    // The record keeps each distinct reference's value once (`references`), beside the parameters as declared.
    const budget = new InterpolationBudget(this.#env.maxInterpolatedBytes);
    const outputOf = (id: string) => {
      const j = this.#graph.indexOf.get(id);
      return j !== undefined && outcomes.status[j] === SUCCEEDED ? { found: true, value: outcomes.outputs[j]! } : { found: false };
    };
    const references = emptyMap();
    const steps = plan.steps.map((step) => {
      if (step.ref_index === undefined || this.#hasRefs[step.ref_index] !== 1) return step;
      const declared = step.call.parameters;
      try {
        const parameters = resolveOutputRefs(declared, outputOf, budget);
        const found = new Set<string>();
        referencesIn(declared, found);
        for (const text of found) if (!Object.hasOwn(references, text)) setOwn(references, text, resolveOutputRefs({ v: text }, outputOf)["v"]!);
        return { ...step, call: { ...step.call, parameters }, declared };
      } catch (error) {
        return { ...step, error: reasonText(error), declared };
      }
    });
    return Object.keys(references).length === 0 ? { steps, gaps: plan.gaps } : { steps, gaps: plan.gaps, references };
  }

  /**
   * Runs `plan` after the rollback (see `compensation/`): each step through
   * the same gates and dispatcher path as a forward call, on a dispatcher of
   * its own that the forward abort does not cancel and the budget does not
   * stop (an undo must not be refused for the time the failure already
   * took). `done` and `planned` resume an interrupted phase.
   */
  async compensate(plan: CompensationPlan, timeoutMs: number, done: ReadonlySet<string> = new Set(), planned = false): Promise<CompensationOutcome> {
    const env = this.#env;
    const meter = new CostMeter(undefined, env.clock);
    const dispatcher = new Dispatcher(env, this.#options.caller, this.#options.session_id, meter, new Scheduler(this.#graph, 0, () => {}), this.#events);
    const path: CompensationPath = {
      run_id: this.#options.run_id,
      tools: env.tools,
      gates: env,
      state: env.store.state,
      timeoutMs,
      emit: (kind, action_id, data) => this.#events.emit(kind, action_id, data),
      held: (action_id, decision) => this.gated.push(gatedAction(action_id, "compensation", decision)),
      call: async (action, tool, params) => {
        const { outcome } = await dispatcher.call(action, tool, params);
        return outcome instanceof ActionFailure ? { error: outcome.message, terminal: outcome.terminal } : { output: outcome.output };
      },
    };
    // Each compensation event names its run (`RunEvents`), so a phase resumed after later runs of the same proposal id still belongs to its own.
    const hooks = {
      emit: (kind: string, action_id: string | undefined, data: JsonObject) => this.#events.emit(kind, action_id, data),
      dispatch: (step: CompensationStep) => dispatchStep(path, step),
    };
    const report = await runCompensation(plan, hooks, done, planned);
    return { report, toolCalls: meter.toolCalls, retries: meter.retries };
  }

  /** The commit for this run's outcome. */
  commitInput(outcome: RunOutcome) {
    return {
      proposal_id: this.#proposal.id,
      run_id: this.#options.run_id,
      outcome,
      mutations: outcome === "committed" ? this.#working.mutations : [],
      reads: this.#working.reads,
      assumptions: this.#pipeline.assumptions,
      events: this.#events.appended,
    };
  }
}
