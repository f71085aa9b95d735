/**
 * The adapter for `@car/engine`, in process. Tools are registered by schema
 * only and answered through the seeds' single JSON-string callback, so the
 * suite exercises the same contract a foreign host would implement.
 * Static checks come from `@car/verify`, as the engine's own callers use them.
 */
import { isCarError, serializeProposal, type JsonObject, type JsonValue, type ProposalInput } from "@car/ir";
import { Runtime, type RuntimeOptions } from "@car/engine";
import { equivalent, optimize, simulate, verify } from "@car/verify";
import type { ConformanceRuntime, RuntimeFactory, SubmitOutcome } from "./adapter.ts";
import type { ScenarioPolicy, ScenarioTool } from "./scenario.ts";
import type { ToolBehaviours, ToolCall } from "./tool-behaviours.ts";

export interface EngineAdapterOptions {
  /** Passed to every `new Runtime(...)` (e.g. a store). */
  runtimeOptions?: () => RuntimeOptions;
}

/** What `@car/engine` declares: tools may answer with raw text, and every optional capability is offered. */
export const ENGINE_FEATURES: readonly string[] = ["detached-tools", "rate-limits", "raw_output", "reference"];

/** A fresh `@car/engine` Runtime per scenario. */
export function engineAdapter(options: EngineAdapterOptions = {}): RuntimeFactory {
  let sessions = 0;
  return {
    name: "@car/engine (in process)",
    // Every optional capability and ability the suite knows (the in-process engine has them all).
    features: ENGINE_FEATURES,
    createRuntime: () => new EngineRuntime(new Runtime(options.runtimeOptions?.() ?? {}), `conformance-${++sessions}`),
    destroyRuntime: (rt) => (rt as EngineRuntime).close(),
  };
}

class EngineRuntime implements ConformanceRuntime {
  #behaviours: ToolBehaviours | undefined;

  constructor(
    readonly runtime: Runtime,
    readonly sessionId: string,
  ) {}

  async registerTools(tools: readonly ScenarioTool[], behaviours: ToolBehaviours): Promise<void> {
    this.#behaviours = behaviours;
    for (const t of tools) this.runtime.registerTool({ ...(t.schema ?? {}), name: t.name });
  }

  async registerPolicy(policy: ScenarioPolicy): Promise<void> {
    this.runtime.registerPolicy({ ...policy });
  }

  async setState(state: JsonObject): Promise<void> {
    for (const [k, v] of Object.entries(state)) this.runtime.state.set(k, v);
  }

  async submit(proposal: JsonValue): Promise<SubmitOutcome> {
    try {
      // Scenario data as written, malformed on purpose in some scenarios: the runtime validates it as it does any caller's.
      const result = await this.runtime.executeProposal(proposal as ProposalInput, (callJson, signal) => this.#dispatch(callJson, signal), {
        session_id: this.sessionId,
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

  close(): Promise<void> {
    return this.runtime.close();
  }
}

/** The value as JSON text would carry it, so the in-process runtime is observed exactly as a remote one would be. */
function wireForm<T>(value: unknown): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
