/**
 * The adapter for `@car/engine`, in process. Tools are registered by schema
 * only and answered through the seeds' single JSON-string callback, so the
 * suite exercises the same contract a foreign host would implement.
 * Static checks come from `@car/verify`, as the engine's own callers use them.
 */
import { CarError, isCarError, isJsonObject, parseAction, serializeProposal, type JsonObject, type JsonValue, type ProposalInput } from "@car/ir";
import { ApprovalWaits, borrowedStore, type ExecuteOptions, Runtime, type RuntimeOptions, type SupervisionDecision, type WaitingApproval } from "@car/engine";
import { ApprovalGate, approvalSubject, isPermissionTier } from "@car/policy";
import { equivalent, optimize, simulate, verify } from "@car/verify";
import type { ConformanceRuntime, RuntimeFactory, SubmitOutcome, SupervisedSubmit, SupervisedSubmitView, WaitingSubmit, WaitingSubmitView } from "./adapter.ts";
import { InProcessSupervision } from "./in-process-supervision.ts";
import type { ScenarioPolicy, ScenarioTool } from "./scenario.ts";
import type { ToolBehaviours, ToolCall } from "./tool-behaviours.ts";

export interface EngineAdapterOptions {
  /** Passed to every `new Runtime(...)` (e.g. a store). */
  runtimeOptions?: () => RuntimeOptions;
}

/**
 * What `@car/engine` declares: tools may answer with raw text, and every
 * optional capability — `waiting-approvals` (the engine's `ApprovalWaits`
 * queue, answered through its ledger) and `supervision` (an
 * `InProcessSupervision` on `RuntimeOptions.supervisor`, showing the
 * engine's trimmed intent) included.
 */
export const ENGINE_FEATURES: readonly string[] = ["approvals", "detached-tools", "rate-limits", "raw_output", "reference", "supervision", "waiting-approvals"];

/** A fresh `@car/engine` Runtime per scenario. */
export function engineAdapter(options: EngineAdapterOptions = {}): RuntimeFactory {
  let sessions = 0;
  return {
    name: "@car/engine (in process)",
    // Every optional capability and ability the suite knows (see ENGINE_FEATURES).
    features: ENGINE_FEATURES,
    createRuntime: () => new EngineRuntime(`conformance-${++sessions}`, options),
    destroyRuntime: (rt) => (rt as EngineRuntime).close(),
  };
}

class EngineRuntime implements ConformanceRuntime {
  #behaviours: ToolBehaviours | undefined;
  /** The session's runtime; replaced by a gated one on the same store when a tier is set. */
  runtime: Runtime;
  /** The ungated runtime that owns the store, once `setTier` has replaced it. */
  #owner: Runtime | undefined;
  #gate: ApprovalGate | undefined;
  readonly #tools: ScenarioTool[] = [];
  readonly #policies: ScenarioPolicy[] = [];
  #submitted = false;
  /** The session's supervisor, on every Runtime this session makes; with nobody watching it parks nothing. */
  readonly #supervision: InProcessSupervision;

  constructor(
    readonly sessionId: string,
    readonly options: EngineAdapterOptions,
  ) {
    this.#supervision = new InProcessSupervision(sessionId);
    this.runtime = new Runtime(this.#runtimeOptions());
  }

  /** The caller's options with this session's supervisor (it replaces one the caller set: the suite observes its own). */
  #runtimeOptions(): RuntimeOptions {
    return { ...(this.options.runtimeOptions?.() ?? {}), supervisor: this.#supervision.supervisor };
  }

  async registerTools(tools: readonly ScenarioTool[], behaviours: ToolBehaviours): Promise<void> {
    this.#behaviours = behaviours;
    for (const t of tools) {
      this.runtime.registerTool({ ...(t.schema ?? {}), name: t.name });
      this.#tools.push(t);
    }
  }

  async registerPolicy(policy: ScenarioPolicy): Promise<void> {
    this.runtime.registerPolicy({ ...policy });
    this.#policies.push(policy);
  }

  /**
   * The library's Runtime gates once an approval gate is configured on it
   * (DECISIONS §16), and that is a constructor option: the first tier makes
   * a gated Runtime on the same store (state, events, ledger carry over) and
   * registers the scenario's tools and policies on it again.
   */
  async setTier(tier: string): Promise<void> {
    if (!isPermissionTier(tier)) throw new CarError("invalid_params", `unknown permission tier '${tier}'`);
    if (this.#gate !== undefined) {
      this.#gate.setTier(tier);
      return;
    }
    if (this.#submitted) throw new CarError("invalid_params", "the engine adapter sets a tier only before the first submit");
    const owner = this.runtime;
    this.#gate = new ApprovalGate({ ledger: owner.approvals, sessionId: this.sessionId, grantedTier: tier });
    this.runtime = new Runtime({ ...this.#runtimeOptions(), store: borrowedStore(owner.store), approvalGate: this.#gate });
    this.#owner = owner;
    for (const t of this.#tools) this.runtime.registerTool({ ...(t.schema ?? {}), name: t.name });
    for (const p of this.#policies) this.runtime.registerPolicy({ ...p });
  }

  /** Records what a human approving the action through `car approvals approve` would record. */
  async approve(actionJson: JsonValue): Promise<void> {
    const action = parseAction(actionJson);
    const schema = action.tool === undefined ? undefined : this.runtime.listTools().find((t) => t.name === action.tool);
    await this.runtime.approvals.record({
      ...approvalSubject(action, schema),
      decision: "approved",
      reviewer: "runtimebench",
      decided_at: Date.now(),
      expires_at: null,
      session_id: this.sessionId,
    });
  }

  async fingerprint(actionJson: JsonValue): Promise<string> {
    const action = parseAction(actionJson);
    return approvalSubject(
      action,
      this.runtime.listTools().find((t) => t.name === action.tool),
    ).fingerprint;
  }

  /**
   * The `waiting-approvals` capability in process: the proposal waits in an
   * `ApprovalWaits` queue (the session gated at the reference's default
   * `sandbox_edit` unless a tier was set), the wait is read from that queue,
   * and the answer is recorded in the runtime's ledger — as `car approvals`
   * would — and the waiter nudged.
   */
  async waitingSubmit(step: WaitingSubmit): Promise<WaitingSubmitView> {
    if (this.#gate === undefined) await this.setTier("sandbox_edit");
    const waits = new ApprovalWaits(undefined, 25);
    const proposalId = isJsonObject(step.proposal) ? step.proposal["id"] : undefined;
    const submitted = this.#submit(step.proposal, { approvalWait: { waits, timeoutMs: step.wait_for_approval_ms, asked_by: `conn:${this.sessionId}` } });
    let done = false;
    void submitted.finally(() => {
      done = true;
    });
    let row: WaitingApproval | undefined;
    while (!done && row === undefined) {
      row = waits.list().find((w) => w.proposal_id === proposalId);
      if (row === undefined) await new Promise((r) => setTimeout(r, 10));
    }
    const callsBefore = this.#behaviours?.calls.length ?? 0;
    if (row !== undefined && step.answer !== "none") {
      await this.runtime.approvals.record({
        fingerprint: row.fingerprint,
        required_tier: row.required,
        decision: step.answer === "approve" ? "approved" : "rejected",
        reviewer: "runtimebench",
        decided_at: Date.now(),
        expires_at: null,
        session_id: this.sessionId,
      });
      waits.nudge(row.fingerprint);
    }
    return { outcome: await submitted, pending: row === undefined ? null : wireForm<JsonValue>(row), calls_before_answer: callsBefore };
  }

  /**
   * The `supervision` capability in process: a watcher on this session's
   * `InProcessSupervision`, with the step's filter narrowed to this session,
   * answers what it is shown — or leaves without deciding, and a second
   * watcher finds the intent still pending and denies it. The session is
   * gated at the reference's default `sandbox_edit` unless a tier was set,
   * as a server's is, so an `allow` meets the approval gate after it.
   */
  async supervisedSubmit(step: SupervisedSubmit): Promise<SupervisedSubmitView> {
    if (this.#gate === undefined) await this.setTier("sandbox_edit");
    const supervision = this.#supervision;
    let shown: (intent: JsonObject) => void = () => {};
    const intentSeen = new Promise<JsonObject>((resolve) => {
      shown = resolve;
    });
    const leave = supervision.watch({ ...(step.filter ?? {}), sessions: [this.sessionId] }, (intent) => shown(intent));
    try {
      const submitted = this.#submit(step.proposal, {});
      // Either the proposal is parked (an intent is shown) or it is answered unparked.
      const first = await Promise.race([intentSeen.then((intent) => ({ intent })), submitted.then(() => ({ intent: null }))]);
      const intent = first.intent === null ? null : wireForm<JsonObject>(first.intent);
      const intentId = typeof intent?.["id"] === "string" ? intent["id"] : "";
      let stillParked: boolean | undefined;
      if (intent !== null) {
        if (step.decision !== undefined) {
          supervision.decide(intentId, decisionOf(step.decision));
        } else {
          leave();
          stillParked = supervision.pending().some((i) => i["id"] === intentId);
          supervision.decide(intentId, { kind: "deny", reviewer: "runtimebench", reason: "the first supervisor left" });
        }
      }
      const outcome = await submitted;
      let redecide: string | null = null;
      if (intent !== null) {
        try {
          supervision.decide(intentId, { kind: "allow", reviewer: "runtimebench" });
        } catch (err) {
          if (!isCarError(err)) throw err;
          redecide = err.code;
        }
      }
      return { outcome, intent, redecide_error: redecide, ...(stillParked !== undefined ? { still_parked: stillParked } : {}) };
    } finally {
      leave();
    }
  }

  async setState(state: JsonObject): Promise<void> {
    for (const [k, v] of Object.entries(state)) this.runtime.state.set(k, v);
  }

  submit(proposal: JsonValue): Promise<SubmitOutcome> {
    return this.#submit(proposal, {});
  }

  async #submit(proposal: JsonValue, options: Pick<ExecuteOptions, "approvalWait">): Promise<SubmitOutcome> {
    this.#submitted = true;
    try {
      // Scenario data as written, malformed on purpose in some scenarios: the runtime validates it as it does any caller's.
      const result = await this.runtime.executeProposal(proposal as ProposalInput, (callJson, signal) => this.#dispatch(callJson, signal), {
        session_id: this.sessionId,
        ...options,
      });
      return { result: wireForm<JsonValue>(result) };
    } catch (err) {
      if (isCarError(err)) return { error: { code: err.code, message: err.message } };
      throw err;
    }
  }

  async #dispatch(callJson: string, signal: AbortSignal): Promise<string> {
    const call = JSON.parse(callJson) as ToolCall;
    if (this.#behaviours === undefined) return JSON.stringify({ error: `no behaviour for tool '${call.tool}'` });
    const reply = await this.#behaviours.play(call, signal);
    switch (reply.kind) {
      case "output":
        return JSON.stringify(reply.value);
      case "error":
        return JSON.stringify(reply.terminal ? { error: reply.message, terminal: true } : { error: reply.message });
      case "json_text":
      case "raw":
        return reply.text;
      case "cancelled":
        throw new Error("the call was cancelled");
    }
  }

  async verify(proposal: JsonValue, state?: JsonObject): Promise<JsonValue> {
    const tools = this.runtime.listTools();
    return wireForm<JsonValue>(verify(proposal as JsonObject, { ...(state === undefined ? {} : { state }), ...(tools.length === 0 ? {} : { tools }) }));
  }

  async simulate(proposal: JsonValue, state?: JsonObject): Promise<JsonObject> {
    return simulate(proposal as JsonObject, state);
  }

  async equivalent(a: JsonValue, b: JsonValue, testStates?: JsonObject[]): Promise<boolean> {
    return equivalent(a as JsonObject, b as JsonObject, testStates === undefined || testStates.length === 0 ? undefined : testStates);
  }

  async optimize(proposal: JsonValue): Promise<JsonValue> {
    return serializeProposal(optimize(proposal as JsonObject));
  }

  async poll(handle: string): Promise<JsonValue> {
    return wireForm<JsonValue>(this.runtime.toolPoll(handle));
  }

  async cancel(handle: string): Promise<JsonValue> {
    return { cancelled: this.runtime.toolCancel(handle) };
  }

  async getState(): Promise<JsonObject> {
    return wireForm<JsonObject>(this.runtime.state.snapshot());
  }

  async getEvents(): Promise<JsonObject[]> {
    return wireForm<JsonObject[]>(this.runtime.events.query({}));
  }

  async close(): Promise<void> {
    this.#supervision.close();
    await this.runtime.close();
    await this.#owner?.close();
  }
}

/** A scenario's `{ kind, reason? }` as the engine's decision; what `supervision.decide` would refuse is `invalid_params`. */
function decisionOf(d: { kind: string; reason?: string }): SupervisionDecision {
  const reviewer = "runtimebench";
  if (d.kind === "allow") return { kind: "allow", reviewer, ...(d.reason !== undefined ? { reason: d.reason } : {}) };
  if (d.kind !== "deny" && d.kind !== "escalate")
    throw new CarError("invalid_params", `decision.kind must be one of allow, deny, escalate, got '${String(d.kind).slice(0, 40)}'`);
  if (typeof d.reason !== "string" || d.reason.trim() === "") throw new CarError("invalid_params", `decision.reason is required for ${d.kind}`);
  return { kind: d.kind, reviewer, reason: d.reason };
}

/** The value as JSON text would carry it, so the in-process runtime is observed exactly as a remote one would be. */
function wireForm<T>(value: unknown): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
