/**
 * Plays the tools a scenario declares. Every adapter routes each incoming
 * tool call here, so a tool "fails twice then succeeds" or "sleeps 500 ms"
 * identically whether the runtime is in this process or across a socket,
 * and every call is recorded for the scenario's call expectations.
 */
import type { JsonObject, JsonValue } from "@car/ir";
import type { BehaviourStep, ScenarioTool } from "./scenario.ts";

/** A tool call as the runtime made it (the callback contract's fields). */
export interface ToolCall {
  tool: string;
  params: JsonObject;
  action_id: string;
  request_id?: string;
  attempt?: number;
  timeout_ms?: number | null;
  session_id?: string | null;
}

/** What was observed about one call: its fields, when it started and ended (ms since the session began). */
export interface ToolCallRecord extends ToolCall {
  /** Order of arrival, from 0. */
  index: number;
  started_ms: number;
  ended_ms?: number;
  /** How the call ended: the reply kind, or `cancelled` when the runtime gave up on it first. */
  outcome?: ToolReply["kind"];
}

export type ToolReply =
  | { kind: "output"; value: JsonValue }
  | { kind: "error"; message: string; terminal: boolean }
  | { kind: "json_text"; text: string }
  | { kind: "raw"; text: string }
  | { kind: "cancelled" };

const DEFAULT_STEP: BehaviourStep = { output: { ok: true } };

export class ToolBehaviours {
  readonly calls: ToolCallRecord[] = [];
  readonly #tools = new Map<string, ScenarioTool>();
  readonly #served = new Map<string, number>();
  readonly #origin = performance.now();

  constructor(tools: readonly ScenarioTool[] = []) {
    for (const t of tools) this.#tools.set(t.name, t);
  }

  /** The step answering the `n`-th call (0-based) of a tool. */
  static stepFor(behaviour: readonly BehaviourStep[] | undefined, n: number): BehaviourStep {
    if (behaviour === undefined || behaviour.length === 0) return DEFAULT_STEP;
    let remaining = n;
    for (let i = 0; i < behaviour.length; i++) {
      const step = behaviour[i]!;
      const times = step.times ?? 1;
      if (i === behaviour.length - 1 || remaining < times) return step;
      remaining -= times;
    }
    return behaviour[behaviour.length - 1]!;
  }

  /** Answers one call per the tool's declared behaviour; `signal` is the runtime giving up on the call. */
  async play(call: ToolCall, signal?: AbortSignal): Promise<ToolReply> {
    const record: ToolCallRecord = { ...call, index: this.calls.length, started_ms: this.#now() };
    this.calls.push(record);
    const n = this.#served.get(call.tool) ?? 0;
    this.#served.set(call.tool, n + 1);
    const step = ToolBehaviours.stepFor(this.#tools.get(call.tool)?.behaviour, n);
    let reply: ToolReply;
    const honoured = step.ignores_cancel === true ? undefined : signal;
    if (step.sleep_ms !== undefined && step.sleep_ms > 0 && !(await sleep(step.sleep_ms, honoured))) reply = { kind: "cancelled" };
    else if (honoured?.aborted === true) reply = { kind: "cancelled" };
    else reply = replyFor(step, call);
    record.ended_ms = this.#now();
    record.outcome = reply.kind;
    return reply;
  }

  #now(): number {
    return performance.now() - this.#origin;
  }
}

function replyFor(step: BehaviourStep, call: ToolCall): ToolReply {
  if (step.error !== undefined) return { kind: "error", message: step.error, terminal: step.terminal === true };
  if (step.json_text !== undefined) return { kind: "json_text", text: step.json_text };
  if (step.raw !== undefined) return { kind: "raw", text: step.raw };
  if (step.echo === true) return { kind: "output", value: call.params };
  return { kind: "output", value: step.output === undefined ? { ok: true } : step.output };
}

/** Resolves true after `ms`, or false as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted === true) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
