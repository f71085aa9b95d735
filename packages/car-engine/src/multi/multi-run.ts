/**
 * One multi-agent run: the part every pattern shares. It owns the agent
 * calls — concurrency slots, the per-agent timeout, the run's budget, the
 * caller's signal — turns every way a call can go wrong into an error entry
 * for that agent, and writes the run to the event log.
 */
import { CarError, cloneJson, parseAgentOutput, parseAgentSpec, randomIds, rfc3339, shortId, systemClock } from "@car/ir";
import type { AgentOutput, AgentSpec, Clock, JsonObject, ToolSchemaInput } from "@car/ir";
import type { EventLog } from "../events/event-log.ts";
import { InMemoryEventLog } from "../events/in-memory-event-log.ts";
import { MULTI_EVENT_KINDS } from "../events/event-kinds.ts";
import { systemTimers } from "@car/ir";
import type { TimerId, Timers } from "@car/ir";
import { SpendMeter, parseBudget } from "./budget.ts";
import { Slots } from "./slots.ts";
import { answerRecord, isLongTask, taskRecord } from "./task-record.ts";
import type { AgentCallContext, AgentFn, AgentInput, CutOff, CutOffReason, MultiOptions, RunSummary } from "./types.ts";

/** Why a call in flight was aborted; kept beside the signal so the entry can say it. */
interface Stop {
  reason: CutOffReason;
  detail: string;
  error: CarError;
}

/** Validates a pattern's specs up front: a bad spec is the caller's bug, reported before any agent runs. */
export function parseSpecs(specs: readonly unknown[], what: string): AgentSpec[] {
  if (!Array.isArray(specs)) throw new CarError("invalid_params", `${what} must be an array of agent specs`);
  return specs.map((spec, i) => parseSpec(spec, `${what}[${i}]`));
}

export function parseSpec(spec: unknown, what: string): AgentSpec {
  try {
    return parseAgentSpec(spec);
  } catch (error) {
    const e = error as CarError;
    throw new CarError("invalid_params", `${what}: ${e.message}`, e.details);
  }
}

function checkCount(value: number | null | undefined, what: string, allowZero: boolean): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Number.isInteger(value) || value < 0 || (!allowZero && value === 0)) {
    throw new CarError("invalid_params", `${what} must be a ${allowZero ? "non-negative" : "positive"} integer, got ${String(value)}`);
  }
  return value;
}

export class MultiRun {
  readonly run_id: string;
  readonly task: string;
  readonly events: EventLog;
  readonly #pattern: string;
  readonly #agent: AgentFn;
  readonly #clock: Clock;
  readonly #timers: Timers;
  readonly #slots: Slots;
  readonly #timeoutMs: number | undefined;
  readonly #maxAgents: number | undefined;
  readonly #maxDurationMs: number | undefined;
  readonly #spend: SpendMeter;
  readonly #signal: AbortSignal | undefined;
  /** The abort of every call in flight, so stopping the run reaches each one (a Set: O(1) in and out). */
  readonly #inFlight = new Set<(stop: Stop) => void>();
  #stop: Stop | undefined;
  readonly #startedAt: number;
  #durationTimer: TimerId | undefined;
  #calls = 0;
  #failed = 0;
  readonly #cutOff: CutOff[] = [];
  readonly #onCallerAbort = (): void => this.#halt("cancelled", "the caller cancelled the run", "cancelled");

  constructor(pattern: string, task: string, agent: AgentFn, options: MultiOptions) {
    if (typeof task !== "string") throw new CarError("invalid_params", "task must be a string");
    if (typeof agent !== "function") throw new CarError("invalid_params", "the agent callback must be a function");
    const rt = options.runtime;
    this.#pattern = pattern;
    this.task = task;
    this.#agent = agent;
    this.events = options.events ?? rt?.events ?? new InMemoryEventLog();
    this.#clock = options.clock ?? rt?.clock ?? systemClock;
    this.#timers = options.timers ?? rt?.timers ?? systemTimers;
    this.run_id = shortId(options.ids ?? rt?.ids ?? randomIds);
    this.#slots = new Slots(checkCount(options.maxConcurrency, "maxConcurrency", true) ?? 0);
    this.#timeoutMs = checkCount(options.agentTimeoutMs, "agentTimeoutMs", false);
    const budget = parseBudget(options.budget);
    this.#maxAgents = budget.max_agents ?? undefined;
    this.#maxDurationMs = budget.max_duration_ms ?? undefined;
    this.#spend = new SpendMeter(budget);
    this.#signal = options.signal;
    this.#startedAt = this.#clock.now();
  }

  /** Writes the run-start event and arms the duration budget and the caller's signal. */
  start(agents: readonly AgentSpec[], data: JsonObject = {}): void {
    const limits: JsonObject = { ...this.#spend.limits };
    if (this.#maxAgents !== undefined) limits["max_agents"] = this.#maxAgents;
    if (this.#maxDurationMs !== undefined) limits["max_duration_ms"] = this.#maxDurationMs;
    if (this.#timeoutMs !== undefined) limits["agent_timeout_ms"] = this.#timeoutMs;
    this.#emit(MULTI_EVENT_KINDS.runStarted, undefined, {
      pattern: this.#pattern,
      task: this.task,
      agents: agents.map((a) => a.name),
      limits,
      ...data,
    });
    if (this.#maxDurationMs !== undefined) {
      const ms = this.#maxDurationMs;
      this.#durationTimer = this.#timers.setTimeout(() => {
        this.#durationTimer = undefined;
        this.#halt("max_duration", `the run's duration budget of ${ms} ms is spent`, "budget_exceeded");
      }, ms);
    }
    if (this.#signal?.aborted) this.#onCallerAbort();
    else this.#signal?.addEventListener("abort", this.#onCallerAbort, { once: true });
  }

  /** True once the duration budget or the caller's signal has stopped the run. */
  get stopped(): boolean {
    return this.#stop !== undefined;
  }

  /**
   * Runs one agent and always resolves with an AgentOutput: the agent's own
   * (validated) or an error entry naming what went wrong.
   */
  async call(spec: AgentSpec, task: string, step: string, inputs: readonly AgentInput[] = [], tools: readonly ToolSchemaInput[] = []): Promise<AgentOutput> {
    await this.#slots.acquire();
    try {
      // A long task's record is digested a slice per turn before the checks, so a stop meanwhile is still seen.
      const recorded = isLongTask(task) ? await taskRecord(task) : { task };
      if (this.#stop !== undefined) return this.skip(spec, step, this.#stop.reason, this.#stop.detail);
      if (this.#maxAgents !== undefined && this.#calls >= this.#maxAgents) {
        return this.skip(spec, step, "max_agents", `the run's budget of ${this.#maxAgents} agent calls is spent`);
      }
      const refusal = this.#spend.refusal();
      if (refusal !== undefined) return this.skip(spec, step, "budget_exceeded", refusal);
      return await this.#invoke(spec, task, recorded, step, inputs, tools);
    } finally {
      this.#slots.release();
    }
  }

  /** Records an agent the run does not start, with why; returns its error entry. */
  skip(spec: AgentSpec, step: string, reason: CutOffReason, detail: string): AgentOutput {
    this.#cutOff.push({ name: spec.name, step, reason, detail });
    this.#emit(MULTI_EVENT_KINDS.agentSkipped, undefined, { agent: spec.name, step, reason, detail });
    return errorEntry(spec.name, `not started: ${detail}`, 0);
  }

  /** Writes the run-end event, clears the run's timer and returns the fields every result shares. */
  finish(final_answer: string | null): RunSummary {
    if (this.#durationTimer !== undefined) this.#timers.clearTimeout(this.#durationTimer);
    this.#durationTimer = undefined;
    this.#signal?.removeEventListener("abort", this.#onCallerAbort);
    const duration_ms = this.#clock.now() - this.#startedAt;
    const usage = this.#spend.usage;
    const budget_exceeded = this.#spend.exceeded;
    this.#emit(MULTI_EVENT_KINDS.runCompleted, undefined, {
      pattern: this.#pattern,
      agent_calls: this.#calls,
      failed_calls: this.#failed,
      cut_off: this.#cutOff.length,
      has_answer: final_answer !== null,
      duration_ms,
      usage: usage as unknown as JsonObject,
      budget_exceeded: budget_exceeded as unknown as JsonObject | null,
    });
    return {
      run_id: this.run_id,
      task: this.task,
      final_answer,
      agent_calls: this.#calls,
      failed_calls: this.#failed,
      cut_off: this.#cutOff.slice(),
      duration_ms,
      usage,
      budget_exceeded,
    };
  }

  async #invoke(
    spec: AgentSpec,
    task: string,
    recorded: JsonObject,
    step: string,
    inputs: readonly AgentInput[],
    tools: readonly ToolSchemaInput[],
  ): Promise<AgentOutput> {
    const call_id = `call-${++this.#calls}`;
    const started = this.#clock.now();
    this.#emit(MULTI_EVENT_KINDS.agentStarted, call_id, { agent: spec.name, step, ...recorded });

    type Settled = { value: unknown } | { thrown: unknown } | { aborted: true };
    let settle!: (settled: Settled) => void;
    const outcome = new Promise<Settled>((resolve) => {
      settle = resolve;
    });
    // The controller is made on first use of `ctx.signal` (most agents that
    // finish quickly never read it), born aborted if the call already stopped.
    let controller: AbortController | undefined;
    let stop: Stop | undefined;
    // Settles the race directly rather than through an abort listener: EventTarget listeners cost more than the rest of a call.
    const abort = (s: Stop): void => {
      if (stop !== undefined) return;
      stop = s;
      controller?.abort(s.error);
      settle({ aborted: true });
    };
    this.#inFlight.add(abort);
    let timer: TimerId | undefined;
    if (this.#timeoutMs !== undefined) {
      const ms = this.#timeoutMs;
      const detail = `timed out after ${ms} ms`;
      timer = this.#timers.setTimeout(() => {
        timer = undefined;
        abort({ reason: "timeout", detail, error: new CarError("timeout", detail) });
      }, ms);
    }
    const ctx: AgentCallContext = {
      run_id: this.run_id,
      call_id,
      step,
      original_task: this.task,
      inputs: inputs.map((i) => ({ name: i.name, answer: i.answer })),
      get signal(): AbortSignal {
        if (controller === undefined) {
          controller = new AbortController();
          if (stop !== undefined) controller.abort(stop.error);
        }
        return controller.signal;
      },
      timeout_ms: this.#timeoutMs ?? null,
      tools: tools.map((t) => cloneJson(t as unknown as JsonObject) as unknown as ToolSchemaInput),
    };
    const callAgent = (): void => {
      try {
        Promise.resolve(this.#agent(cloneJson(spec as unknown as JsonObject) as unknown as AgentSpec, task, ctx)).then(
          (value) => settle({ value }),
          (thrown: unknown) => settle({ thrown }),
        );
      } catch (thrown) {
        settle({ thrown });
      }
    };
    // A long task is handed over a turn after its event is written: writing the event and sending the
    // task (tens of MiB for a reducer) are then two turns of the loop, with I/O polled between them.
    if (isLongTask(task)) setImmediate(() => stop === undefined && callAgent());
    else callAgent();
    const settled = await outcome;
    if (timer !== undefined) this.#timers.clearTimeout(timer);
    this.#inFlight.delete(abort);
    const elapsed = this.#clock.now() - started;

    if ("aborted" in settled) {
      const s = stop!;
      this.#cutOff.push({ name: spec.name, step, call_id, reason: s.reason, detail: s.detail });
      return this.#failedEntry(spec.name, step, call_id, s.reason, errorEntry(spec.name, s.detail, elapsed));
    }
    if ("thrown" in settled) {
      const message = settled.thrown instanceof Error ? settled.thrown.message : String(settled.thrown);
      return this.#failedEntry(spec.name, step, call_id, "threw", errorEntry(spec.name, `agent threw: ${message}`, elapsed));
    }
    let output: AgentOutput;
    try {
      output = parseAgentOutput(settled.value);
    } catch (error) {
      return this.#failedEntry(spec.name, step, call_id, "invalid_output", errorEntry(spec.name, (error as Error).message, elapsed));
    }
    if (output.name !== spec.name) {
      const message = `invalid agent output: it names '${output.name}' but the agent is '${spec.name}'`;
      return this.#failedEntry(spec.name, step, call_id, "invalid_output", errorEntry(spec.name, message, elapsed));
    }
    this.#spend.record(spec.name, output.tokens);
    if (output.error !== null) return this.#failedEntry(spec.name, step, call_id, "reported", output);
    // A long answer (up to a frame's size, MiB) is recorded by its head, length and digest, digested a slice per turn.
    const answer = isLongTask(output.answer) ? await answerRecord(output.answer) : { answer: output.answer };
    this.#emit(MULTI_EVENT_KINDS.agentFinished, call_id, {
      agent: spec.name,
      step,
      ...answer,
      turns: output.turns,
      tool_calls: output.tool_calls,
      duration_ms: output.duration_ms,
      ...spendOf(output),
    });
    return output;
  }

  /** A call that failed; one that produced no valid output (`reason` other than `reported`) reported no spend either. */
  #failedEntry(name: string, step: string, call_id: string, reason: string, entry: AgentOutput): AgentOutput {
    this.#failed++;
    if (reason !== "reported") this.#spend.record(name, undefined);
    this.#emit(MULTI_EVENT_KINDS.agentFailed, call_id, { agent: name, step, reason, error: entry.error, ...spendOf(entry) });
    return entry;
  }

  #halt(reason: CutOffReason, detail: string, code: "budget_exceeded" | "cancelled"): void {
    if (this.#stop !== undefined) return;
    const stop: Stop = { reason, detail, error: new CarError(code, detail) };
    this.#stop = stop;
    for (const abort of [...this.#inFlight]) abort(stop);
  }

  #emit(kind: string, action_id: string | undefined, data: JsonObject): void {
    const event = { kind, proposal_id: this.run_id, timestamp: rfc3339(this.#clock.now()), data };
    this.events.append(action_id === undefined ? event : { ...event, action_id });
  }
}

/** The spend an output reported, as the event fields `metrics.summary` and `events.cost_by_agent` fold. */
function spendOf(output: AgentOutput): JsonObject {
  const t = output.tokens;
  if (t === undefined || t === null) return {};
  return t.cost_usd === undefined
    ? { tokens_in: t.input_tokens, tokens_out: t.output_tokens }
    : { tokens_in: t.input_tokens, tokens_out: t.output_tokens, cost_usd: t.cost_usd };
}

/** The entry recorded for an agent that produced no valid answer. */
export function errorEntry(name: string, error: string, duration_ms: number): AgentOutput {
  return { name, answer: "", turns: 0, tool_calls: 0, duration_ms, error };
}

/** True when the entry is a usable answer. */
export function succeeded(output: AgentOutput): boolean {
  return output.error === null;
}
