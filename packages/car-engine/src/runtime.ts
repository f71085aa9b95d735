/**
 * The CAR runtime: a tool registry, a policy engine and a store, and
 * `executeProposal`, which admits a proposal (parse → duplicate ids and
 * graph → static gate → budget) and runs it (`ProposalRun`), then commits
 * its state changes and events together through the store.
 */
import { CarError, DEFAULT_MAX_INTERPOLATED_BYTES, isCarError, parseProposalWithGraph, randomIds, shortId, systemClock } from "@car/ir";
import type {
  ActionProposal,
  Clock,
  CostBudget,
  IdGenerator,
  ParsedProposal,
  ProposalInput,
  ProposalResult,
  ToolSchema,
  ToolSchemaInput,
  ToolStreamEvent,
  VerificationResult,
} from "@car/ir";
import {
  isPermissionTier,
  PERMISSION_TIERS,
  PolicyEngine,
  PolicyRules,
  TraceFacts,
  TraceGate,
  loadPolicyDir,
  policyDirs,
  policyRuleFrom,
  traceRuleOfDefinition,
} from "@car/policy";
import type { Tracer } from "@opentelemetry/api";
import { verify } from "@car/verify";
import type { TransactionMode, VerifyOptions } from "@car/verify";
import type { ApprovalGate, ApprovalLedger, CarHomeOptions, PermissionTier, PolicyDefinition, PolicyRule } from "@car/policy";
import type { EventLog } from "./events/event-log.ts";
import { inMemoryStore } from "./store/runtime-store.ts";
import type { InterruptedProposal, RuntimeStore } from "./store/runtime-store.ts";
import type { StateStore } from "./store/state-store.ts";
import { systemTimers } from "@car/ir";
import type { Timers } from "@car/ir";
import { DetachedInvocations } from "./tools/detached.ts";
import type { DetachedPollResult } from "./tools/detached.ts";
import type { ToolCallback, ToolHandler } from "./tools/handler.ts";
import { RateLimiter } from "./tools/rate-limiter.ts";
import type { AgentSession } from "./trace/agent-sessions.ts";
import { ResultCache } from "./tools/result-cache.ts";
import { ToolRegistry } from "./tools/tool-registry.ts";
import { jsonCallbackCaller } from "./tools/tool-call.ts";
import type { ToolCaller } from "./tools/tool-call.ts";
import { admit } from "./admission/admit.ts";
import type { AdmissionRules } from "./admission/admit.ts";
import type { AdmissionFinding } from "./admission/admission.ts";
import type { AdmissionGuard, AdmittedRun } from "./admission/admission-guard.ts";
import { staticChecks } from "./admission/static-checks.ts";
import type { ProposalOutcome } from "./run/run-report.ts";
import type { ApprovalWait } from "./admission/approvals.ts";
import type { Supervisor } from "./supervision/supervisor.ts";
import { keepRunShapes } from "./run/shape-keeper.ts";
import { ProposalRun } from "./run/proposal-run.ts";
import type { RunEnvironment } from "./run/proposal-run.ts";
import { checkChunk } from "./tools/tool-output.ts";
import { DEFAULT_COMPENSATION_TIMEOUT_MS } from "./compensation/compensation-dispatch.ts";
import { compensatedResult, pendingCompensations, resumable, runPhase } from "./compensation/compensation-phase.ts";
import { verifiedProposalEvents } from "./durable/intact-log.ts";
import type { AuditedRuntimeStore } from "./durable/durable-store.ts";
import { traceSettings } from "./telemetry/run-tracer.ts";
import type { CompensationReport, PendingCompensation } from "./compensation/compensation-phase.ts";

export interface RuntimeOptions {
  clock?: Clock;
  timers?: Timers;
  ids?: IdGenerator;
  /** Where state and events live; in memory unless given (e.g. a SQLite or PostgreSQL bundle). */
  store?: RuntimeStore;
  /** Limits applied to every proposal unless `executeProposal` passes its own. */
  budget?: CostBudget;
  /** Most actions in flight at once per proposal; 0 (default) = no limit. */
  maxConcurrency?: number;
  /** Largest tool output accepted, in bytes of JSON (default 8 MiB); larger is a validation failure. */
  maxOutputBytes?: number;
  /** Bytes `$id.output` references may put into one proposal's parameters, in all (default 64 MiB); more rejects the action (`budget_exceeded`). */
  maxInterpolatedBytes?: number;
  /** Entries kept in the idempotency / TTL result cache (default 10 000). */
  resultCacheSize?: number;
  /**
   * Traces every proposal with OpenTelemetry spans (`@opentelemetry/api`:
   * pass `trace.getTracer("…")` once an SDK is set up). Off by default.
   */
  tracer?: Tracer;
  /**
   * The permission-tier / approval gate (@car/policy); none by default. The
   * whole proposal is evaluated at admission (DECISIONS §16): one action
   * needing an approval rejects every action, naming its fingerprint, and
   * nothing runs. Build it on `store.approvals` so decisions recorded there
   * (`permission.approve`, `car approvals`) make the re-submission pass.
   */
  approvalGate?: ApprovalGate;
  /**
   * `transactionCheck` at admission over each proposal and the store's
   * versions (agent-ir-spec.md TransactionCheckMode): `strict` rejects the
   * actions in blocking conflicts before anything runs, `warn` records a
   * `transaction_warning` event and runs, `off` (default) checks nothing.
   */
  transactionCheck?: TransactionMode;
  /**
   * What an abort undoes: `"state"` (default) restores state only;
   * `"compensate"` also runs the compensation of every succeeded
   * `compensable` action, in reverse completion order.
   */
  rollback?: RollbackMode;
  /** Bound on one compensation call that declares no `timeout_ms` (default 30 s). */
  compensationTimeoutMs?: number;
  /**
   * The host's check on every proposal this runtime admits, whatever its
   * source (`executeProposal` directly, a planner attempt, a skill): it runs
   * right after parsing and may refuse the proposal, hold resources for the
   * run, and wrap the run's tool caller (admission/admission-guard.ts).
   */
  admission?: AdmissionGuard;
  /**
   * The agent this runtime acts for, when a host runs several runtimes for
   * one agent (a server's connections): its session-scoped trace facts and
   * its tools' rate-limit windows, shared by all of them so a reconnect or a
   * second connection does not start afresh (DECISIONS §21). Own ones by default.
   */
  agent?: AgentSession;
  /**
   * An outside supervisor at admission (supervision/supervisor.ts): asked
   * for every proposal right after the static gate; a proposal it parks
   * waits for its verdict before any other check, and `allow` is no bypass.
   */
  supervisor?: Supervisor;
}

/** What an abort undoes (see `RuntimeOptions.rollback`). */
export type RollbackMode = "state" | "compensate";

export interface ExecuteOptions {
  /** Passed to tools as `session_id`. */
  session_id?: string | null;
  budget?: CostBudget;
  maxConcurrency?: number;
  /** Aborts the proposal (rolled back like any abort) when it fires. It does not cut a compensation short. */
  signal?: AbortSignal;
  /** This proposal's rollback mode; the runtime's when absent. */
  rollback?: RollbackMode;
  /**
   * The typed form of `dispatch`, for a transport in the same process (the
   * WebSocket server): it receives the `ToolCall` itself and returns the
   * tool's output, so nothing is serialised on the way. Not with `dispatch`.
   */
  toolCaller?: ToolCaller;
  /** Wait for the approvals the proposal needs instead of rejecting it (admission/approvals.ts). */
  approvalWait?: ApprovalWait;
  /**
   * Refuse a proposal holding a field the spec does not name (a typo such as
   * `dependecies`) as `invalid_proposal`, each with its pointer and a
   * did-you-mean, instead of keeping it for the round trip (DECISIONS §25).
   */
  strict?: boolean;
  /**
   * Caps the standing tier for this proposal, at admission and at dispatch
   * (a skill's `deployment_tier`: the skill that drove the actions): they
   * are judged at `min(granted, tierCeiling)` on the same ledger. Needs an
   * approval gate (`RuntimeOptions.approvalGate`); without one it is
   * refused, not ignored.
   */
  tierCeiling?: PermissionTier;
}

export const DEFAULT_MAX_OUTPUT_BYTES = 8 * 1024 * 1024;

export class Runtime {
  readonly clock: Clock;
  readonly timers: Timers;
  readonly ids: IdGenerator;
  readonly store: RuntimeStore;
  readonly policies: PolicyEngine = new PolicyEngine();
  /** The temporal rules (`trace_rule`), enforced at dispatch against what this runtime has run (its session). */
  readonly traceGate: TraceGate;
  readonly #tools = new ToolRegistry();
  readonly #cache: ResultCache;
  readonly #limiter: RateLimiter;
  /** Whether the rate-limit windows are this runtime's alone (an agent's shared ones outlive re-registration). */
  readonly #ownsLimiter: boolean;
  readonly #detached: DetachedInvocations;
  readonly #options: RuntimeOptions;
  readonly #env: RunEnvironment;
  #closed = false;

  constructor(options: RuntimeOptions = {}) {
    this.#options = options;
    this.clock = options.clock ?? systemClock;
    this.timers = options.timers ?? systemTimers;
    this.ids = options.ids ?? randomIds;
    this.store = options.store ?? inMemoryStore({ clock: this.clock });
    this.traceGate = new TraceGate(options.agent?.trace ?? new TraceFacts());
    this.#limiter = options.agent?.limiter ?? new RateLimiter();
    this.#ownsLimiter = options.agent === undefined;
    const maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    this.#cache = new ResultCache(options.resultCacheSize ?? 10_000);
    this.#detached = new DetachedInvocations((value) => checkChunk(value, maxOutputBytes));
    this.#env = {
      tools: this.#tools,
      cache: this.#cache,
      limiter: this.#limiter,
      detached: this.#detached,
      policies: this.policies,
      store: this.store,
      clock: this.clock,
      timers: this.timers,
      ids: this.ids,
      maxOutputBytes,
      maxInterpolatedBytes: options.maxInterpolatedBytes ?? DEFAULT_MAX_INTERPOLATED_BYTES,
      approvalGate: options.approvalGate,
      tracer: options.tracer === undefined ? undefined : traceSettings(options.tracer, (this.store as Partial<AuditedRuntimeStore>).keyedDigest),
      traceGate: this.traceGate,
    };
  }

  /** The versioned state (the store's). */
  get state(): StateStore {
    return this.store.state;
  }

  /** The approval ledger (the store's). */
  get approvals(): ApprovalLedger {
    return this.store.approvals;
  }

  /** The audit log (the store's). Other parts of the runtime (multi-agent runs) append to it too. */
  get events(): EventLog {
    return this.store.events;
  }

  // --- tools --------------------------------------------------------------

  /**
   * Registers a tool: a full ToolSchema (its `parameters` and `returns` JSON
   * Schemas are compiled now and enforced on every call) or a bare name (any
   * parameters). The handler is optional when proposals run with a dispatch
   * callback. Re-registering replaces the tool and drops its cached results.
   */
  registerTool(schemaOrName: string | ToolSchemaInput, handler?: ToolHandler): ToolSchema {
    const schema = this.#tools.register(schemaOrName, handler);
    this.#cache.forget(schema.name);
    this.#forgetWindow(schema.name);
    return schema;
  }

  /** Removes a tool; 0 when none matched (not an error). */
  unregisterTool(name: string): number {
    this.#cache.forget(name);
    this.#forgetWindow(name);
    return this.#tools.unregister(name);
  }

  /** Drops a tool's rate-limit window, unless it is the agent's: re-registering a tool must not reset the agent's limit. */
  #forgetWindow(tool: string): void {
    if (this.#ownsLimiter) this.#limiter.forget(tool);
  }

  /** Every registered ToolSchema, sorted by name. */
  listTools(): ToolSchema[] {
    return this.#tools.list();
  }

  // --- policies -----------------------------------------------------------

  /**
   * Adds a policy: a rule object from @car/policy, a definition of one of
   * the registrable kinds (DECISIONS.md §8), or the original binding's
   * positional form `(name, rule, target?, key?, pattern?, valueJson?)`.
   * Returns the policy's name; anything else is `invalid_params` naming the
   * accepted shapes.
   */
  registerPolicy(policy: PolicyRule | PolicyDefinition): string;
  registerPolicy(name: string, rule: string, target?: string | null, key?: string | null, pattern?: string | null, valueJson?: string | null): string;
  registerPolicy(...args: unknown[]): string {
    const [first] = args;
    if (args.length === 1 && isTraceDefinition(first)) {
      this.traceGate.register(traceRuleOfDefinition(first));
      return first.name;
    }
    const rule = policyRuleOf(args);
    this.policies.register(rule);
    return rule.name;
  }

  /**
   * Registers tools and policies all or nothing: every entry is checked
   * first (schemas compiled, definitions turned into rules), so one bad entry
   * leaves the runtime as it was.
   */
  registerAll(tools: readonly (string | (Partial<ToolSchema> & { name: string }))[], policies: readonly (PolicyRule | PolicyDefinition)[]): void {
    const prepared = tools.map((t) => this.#tools.prepare(t));
    const traces = policies.filter(isTraceDefinition).map(traceRuleOfDefinition);
    const rules = policies.filter((p) => !isTraceDefinition(p)).map((p) => ("evaluate" in p ? p : policyRuleFrom(p)));
    for (const tool of prepared) {
      this.#tools.add(tool);
      this.#cache.forget(tool.schema.name);
      this.#forgetWindow(tool.schema.name);
    }
    for (const rule of rules) this.policies.register(rule);
    for (const trace of traces) this.traceGate.register(trace);
  }

  /** Removes every policy (and trace rule) with this name; returns how many were removed. */
  unregisterPolicy(name: string): number {
    return this.policies.unregister(name) + this.traceGate.unregister(name);
  }

  /**
   * Loads every `*.toml` policy file of `dir` onto this runtime's policy
   * engine. A missing directory adds nothing; a malformed file throws
   * `policy_load_failed` naming it, and then nothing from `dir` is added.
   * Returns how many rules were added.
   */
  loadPolicies(dir: string): number {
    const rules = loadPolicyDir(dir);
    rules.apply(this.policies, { clock: this.clock, traceGate: this.traceGate });
    return rules.len;
  }

  /**
   * Loads a project's policies with the same discovery as the policy gate
   * (DECISIONS.md §7): `<CAR_HOME>/policies`, then every `.car/policies`
   * from the repository root down to `cwd`. All files are read before any
   * rule is added, so a malformed file anywhere adds nothing. Returns how
   * many rules were added.
   */
  loadProjectPolicies(cwd: string, options: CarHomeOptions = {}): number {
    const merged = new PolicyRules();
    for (const dir of policyDirs(cwd, options)) merged.merge(loadPolicyDir(dir));
    merged.apply(this.policies, { clock: this.clock, traceGate: this.traceGate });
    return merged.len;
  }

  // --- execution ----------------------------------------------------------

  /**
   * Static verification against this runtime: its registered tools (names
   * and parameter schemas), its current state and its trace rules (checked
   * against every order the plan permits). Pure: nothing runs, and policies
   * are not evaluated (they are enforced at execution).
   */
  verifyProposal(proposal: ProposalInput | ParsedProposal, options: { maxActions?: number; strict?: boolean } = {}): VerificationResult {
    const verifyOptions: VerifyOptions = { state: this.state.snapshot(), tools: this.listTools(), traceRules: this.traceGate.rules() };
    // `?.`: a null or non-object `options` is "none given", not a TypeError.
    const maxActions = (options as { maxActions?: number } | null)?.maxActions;
    if (maxActions !== undefined) verifyOptions.maxActions = maxActions;
    const strict = (options as { strict?: boolean } | null)?.strict;
    if (strict !== undefined) verifyOptions.strict = strict;
    return verify(proposal, verifyOptions);
  }

  /**
   * Admits and executes a proposal: JSON text, a proposal as a producer
   * writes it (`ActionProposalInput`; a parsed `ActionProposal` is one), or
   * the pair `parseProposalWithGraph` returned, which is used as it is:
   * neither parsed nor graphed again. The type guides TypeScript callers
   * only; whatever arrives is validated (from JavaScript or through a cast,
   * anything can). A proposal that does not parse — bad shape, duplicate
   * ids, unknown dependencies, cycles, bad `$id.output` references — throws
   * `invalid_proposal`; one that fails the static gate or its budget comes
   * back with every action `rejected` and nothing run.
   *
   * Tools are dispatched to their registered handler, else to `dispatch`
   * (the single JSON-string callback contract) or `options.toolCaller`.
   */
  async executeProposal(proposal: ProposalInput | ParsedProposal, dispatch?: ToolCallback, options: ExecuteOptions = {}): Promise<ProposalResult> {
    return (await this.executeProposalWithReport(proposal, dispatch, options)).result;
  }

  /**
   * `executeProposal`, with the run's report beside the result: the outcome
   * (`committed`, `rolled_back`, `rejected`, `refused`), the `CarError` code
   * that says what went wrong, the actions the approval gate held (with
   * fingerprint and tiers) and a refused commit's code and keys — what a
   * transport needs to answer, as data. A separate method rather than an
   * option or a hidden field, so `executeProposal`'s result stays exactly the
   * wire `ProposalResult` (callers that spread, clone or serialise it see
   * nothing new) and its type does not depend on an argument.
   */
  async executeProposalWithReport(proposal: ProposalInput | ParsedProposal, dispatch?: ToolCallback, options: ExecuteOptions = {}): Promise<ProposalOutcome> {
    if (this.#closed) throw new CarError("invalid_params", "the runtime is closed");
    keepRunShapes(newRuntime);
    if (dispatch !== undefined && typeof dispatch !== "function") throw new CarError("invalid_params", "dispatch must be a function");
    const rollback = options.rollback ?? this.#options.rollback ?? "state";
    if (rollback !== "state" && rollback !== "compensate")
      throw new CarError("invalid_params", `rollback must be "state" or "compensate", got ${JSON.stringify(rollback)}`);
    if (dispatch !== undefined && options.toolCaller !== undefined) throw new CarError("invalid_params", "give dispatch or toolCaller, not both");
    if (options.strict !== undefined && typeof options.strict !== "boolean") throw new CarError("invalid_params", "strict must be a boolean");
    const { proposal: parsed, graph } = parseProposalWithGraph(proposal, { clock: this.clock, ids: this.ids, strict: options.strict === true });
    const budget = options.budget ?? this.#options.budget;
    const caller = dispatch !== undefined ? jsonCallbackCaller(dispatch, this.#env.maxOutputBytes) : options.toolCaller;
    const approvalGate = this.#approvalGateFor(options);
    const env = approvalGate === this.#env.approvalGate ? this.#env : { ...this.#env, approvalGate };
    // The run and the guard's hold, once admission has made them: ended and released here, however admission or the run ends.
    const opened: { run?: ProposalRun; held?: AdmittedRun | undefined } = {};
    try {
      const { run, findings } = await admit(parsed, this.#admissionRules(budget, options, approvalGate), (admission, held) => {
        opened.held = held;
        opened.run = new ProposalRun(
          env,
          {
            run_id: newRunId(),
            caller: caller !== undefined && held?.wrapCaller !== undefined ? held.wrapCaller(caller) : caller,
            session_id: options.session_id ?? null,
            budget,
            maxConcurrency: options.maxConcurrency ?? this.#options.maxConcurrency ?? 0,
            signal: options.signal,
            approvalWait: options.approvalWait,
          },
          parsed,
          graph,
          admission,
        );
        return opened.run;
      });
      const result = await this.#run(run, parsed, findings, rollback, opened.held);
      return { result, report: run.report(result, findings) };
    } finally {
      if (opened.run !== undefined) {
        this.traceGate.endRun(opened.run.id);
        opened.run.endTrace();
      }
      opened.held?.release();
    }
  }

  /** The gate this proposal is held to: the runtime's, capped at `tierCeiling` when one is given. */
  #approvalGateFor(options: ExecuteOptions): ApprovalGate | undefined {
    const gate = this.#options.approvalGate;
    const ceiling = options.tierCeiling;
    if (ceiling === undefined) return gate;
    if (!isPermissionTier(ceiling)) throw new CarError("invalid_params", `tierCeiling must be one of ${PERMISSION_TIERS.join(", ")}`);
    if (gate === undefined)
      throw new CarError("invalid_params", "tierCeiling needs an approval gate (RuntimeOptions.approvalGate): this runtime has no tiers to cap");
    return gate.capped(ceiling);
  }

  #admissionRules(budget: CostBudget | undefined, options: ExecuteOptions, approvalGate: ApprovalGate | undefined): AdmissionRules {
    return {
      supervisor: this.#options.supervisor,
      submitted: { session_id: options.session_id ?? null, wait: options.approvalWait, signal: options.signal },
      tools: this.#tools,
      budget,
      guard: this.#options.admission,
      store: this.store,
      clock: this.clock,
      transactionCheck: this.#options.transactionCheck ?? "off",
      approvalGate,
      traceGate: this.traceGate,
    };
  }

  /** Runs and commits an admitted proposal (or records its rejection). */
  async #run(
    run: ProposalRun,
    parsed: ActionProposal,
    findings: readonly AdmissionFinding[],
    rollback: RollbackMode,
    held: AdmittedRun | undefined,
  ): Promise<ProposalResult> {
    if (findings.length > 0) {
      const result = run.rejectAll(findings);
      await this.store.commitProposal(run.commitInput("rejected"));
      return result;
    }
    await run.execute();
    let result = run.finish();
    if (!run.aborted) {
      try {
        // The host's say on what the run would write first (a server's memory bound: `budget_exceeded`), then the store's.
        held?.committing?.(run.writes);
        await this.store.commitProposal(run.commitInput("committed"));
        held?.committed?.(run.writes);
        return result;
      } catch (error) {
        if (!isCarError(error, "stale_read") && !isCarError(error, "write_conflict") && !isCarError(error, "budget_exceeded")) throw error;
        // The writes were refused: one `commit_refused` event, and the proposal ends rolled back.
        result = run.refuseCommit(error);
      }
    }
    await this.store.commitProposal(run.commitInput("rolled_back"));
    if (rollback !== "compensate") return result;
    const outcome = await runPhase(this.store, this.clock, run, run.compensationPlan(), this.#compensationTimeoutMs(), parsed.id);
    return compensatedResult(result, outcome);
  }

  #compensationTimeoutMs(): number {
    return this.#options.compensationTimeoutMs ?? DEFAULT_COMPENSATION_TIMEOUT_MS;
  }

  /**
   * Compensation phases the log shows planned and never completed — a crash
   * (or a closed runtime) cut them short. Each names what is done and what
   * remains; `resumeCompensation` finishes one.
   */
  pendingCompensations(): PendingCompensation[] {
    return pendingCompensations(this.events);
  }

  /**
   * Finishes an interrupted compensation from the log alone: the plan
   * recorded in `compensation_planned`, minus the steps that already
   * succeeded (a step that started and left no outcome runs again — make
   * compensations safe to repeat). Steps go through this runtime's dispatch
   * path, and the phase is recorded like the original. On a durable store
   * the chain is verified first (the plan event's hash and MAC among it), and
   * the plan acted on is the one that verification read: a log that does not
   * verify is refused with `chain_broken`, nothing run. Of several runs of
   * one proposal id, the newest whose compensation was cut short resumes.
   */
  async resumeCompensation(proposal_id: string, dispatch?: ToolCallback, options: Pick<ExecuteOptions, "session_id"> = {}): Promise<CompensationReport> {
    if (this.#closed) throw new CarError("invalid_params", "the runtime is closed");
    const events = await verifiedProposalEvents(this.store, proposal_id, `resuming the compensation of '${proposal_id}'`);
    const { proposal, run_id, plan, done } = resumable(events, proposal_id);
    const run = new ProposalRun(
      this.#env,
      {
        // The resumed phase is the same run's compensation, under its run id.
        run_id: run_id ?? newRunId(),
        caller: dispatch === undefined ? undefined : jsonCallbackCaller(dispatch, this.#env.maxOutputBytes),
        session_id: options.session_id ?? null,
        budget: undefined,
        maxConcurrency: 0,
        signal: undefined,
      },
      proposal.proposal,
      proposal.graph,
      staticChecks(proposal.proposal, this.#tools),
    );
    try {
      return (await runPhase(this.store, this.clock, run, plan, this.#compensationTimeoutMs(), proposal_id, { done })).report;
    } finally {
      this.traceGate.endRun(run.id);
    }
  }

  // --- detached tools -----------------------------------------------------

  /** Drains a detached invocation's chunks and reports its status; null for an unknown or consumed handle. */
  toolPoll(handle: string | { id: string }): DetachedPollResult | null {
    return this.#detached.poll(typeof handle === "string" ? handle : handle.id);
  }

  /** Cooperatively cancels a detached invocation; false for an unknown handle. */
  toolCancel(handle: string | { id: string }): boolean {
    return this.#detached.cancel(typeof handle === "string" ? handle : handle.id);
  }

  /** Live chunks of one detached invocation, or of all of them when no handle is given. */
  toolSubscribe(handle?: string | { id: string }, signal?: AbortSignal): AsyncIterableIterator<ToolStreamEvent> {
    return this.#detached.subscribe(handle === undefined ? undefined : typeof handle === "string" ? handle : handle.id, signal);
  }

  // --- lifecycle ----------------------------------------------------------

  /** Asks the store which proposals were interrupted by a crash (durable stores); [] in memory. */
  async recover(): Promise<InterruptedProposal[]> {
    return (await this.store.recover?.()) ?? [];
  }

  /** Cancels running detached tools, ends tool feeds and closes the store. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#detached.close();
    await this.store.close?.();
  }
}

/** A fresh run id (DECISIONS §20). Random, not from the injected id generator, so ids a test expects are not shifted. */
function newRunId(): string {
  return `run-${shortId(randomIds)}`;
}

const POLICY_SHAPES =
  "registerPolicy takes a PolicyRule ({ name, evaluate }), a definition ({ name, rule, target?, key?, pattern?, value?, value_json?, callback?, trace? }) " +
  "or positional arguments (name, rule, target?, key?, pattern?, valueJson?)";

function describeArgs(args: readonly unknown[]): string {
  return args.map((a) => (a === null ? "null" : Array.isArray(a) ? "array" : typeof a)).join(", ") || "nothing";
}

/** A `trace_rule` definition: registered on the TraceGate, not the policy engine. */
function isTraceDefinition(value: unknown): value is PolicyDefinition {
  return typeof value === "object" && value !== null && !("evaluate" in value) && (value as PolicyDefinition).rule === "trace_rule";
}

/** The rule `registerPolicy`'s arguments describe, in any of its three shapes. */
function policyRuleOf(args: readonly unknown[]): PolicyRule {
  const [first] = args;
  if (typeof first === "string") {
    const [, rule, target, key, pattern, valueJson] = args;
    const optional = [target, key, pattern, valueJson].every((v) => v === undefined || v === null || typeof v === "string");
    if (typeof rule !== "string" || !optional || args.length > 6) throw new CarError("invalid_params", `${POLICY_SHAPES}; got (${describeArgs(args)})`);
    return policyRuleFrom({
      name: first,
      rule,
      target: target as string | null,
      key: key as string | null,
      pattern: pattern as string | null,
      value_json: valueJson as string | null,
    });
  }
  if (args.length === 1 && first !== null && typeof first === "object" && typeof (first as { name?: unknown }).name === "string") {
    if (typeof (first as PolicyRule).evaluate === "function") return first as PolicyRule;
    if (typeof (first as PolicyDefinition).rule === "string") return policyRuleFrom(first as PolicyDefinition);
  }
  throw new CarError("invalid_params", `${POLICY_SHAPES}; got (${describeArgs(args)})`);
}

/** A runtime with every default: the shape keeper's (one function, not a closure per proposal). */
function newRuntime(): Runtime {
  return new Runtime();
}
