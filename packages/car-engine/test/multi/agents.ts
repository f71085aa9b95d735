/**
 * Deterministic agents and a fake-time environment for the multi-agent
 * tests: time moves only through `timers`, ids are sequential, and the
 * events land in a log the test can read.
 */
import { sequentialIds } from "@car/ir";
import type { AgentOutput, AgentSpec } from "@car/ir";
import { InMemoryEventLog, manualTimers, sleep } from "../../src/index.ts";
import type { ManualTimers } from "../../src/index.ts";
import type { AgentCallContext, AgentFn, MultiOptions } from "../../src/multi/index.ts";

export function spec(name: string, system_prompt = `you are ${name}`): AgentSpec {
  return { name, system_prompt, tools: [], max_turns: 3, metadata: {} };
}

export function output(name: string, answer: string, error: string | null = null): AgentOutput {
  return { name, answer, turns: 1, tool_calls: 0, duration_ms: 1, error };
}

export interface FakeEnv {
  timers: ManualTimers;
  events: InMemoryEventLog;
  options: MultiOptions;
}

export function fakeEnv(extra: MultiOptions = {}): FakeEnv {
  const timers = manualTimers(1_700_000_000_000);
  const events = new InMemoryEventLog();
  return { timers, events, options: { clock: timers, timers, ids: sequentialIds("run"), ...extra, events } };
}

type Behaviour = (task: string, ctx: AgentCallContext, spec: AgentSpec) => AgentOutput | string | Promise<AgentOutput | string>;

/**
 * An agent whose behaviour is chosen by the spec's name; unnamed agents
 * answer `<name>: <task>`. Records every call and the most calls in flight.
 */
export function scripted(
  behaviours: Record<string, Behaviour> = {},
): AgentFn & { calls: { name: string; task: string; ctx: AgentCallContext }[]; maxInFlight: number } {
  let inFlight = 0;
  const fn = (async (s: AgentSpec, task: string, ctx: AgentCallContext) => {
    fn.calls.push({ name: s.name, task, ctx });
    inFlight++;
    fn.maxInFlight = Math.max(fn.maxInFlight, inFlight);
    try {
      const behaviour = behaviours[s.name];
      return behaviour === undefined ? output(s.name, `${s.name}: ${task}`) : await behaviour(task, ctx, s);
    } finally {
      inFlight--;
    }
  }) as AgentFn & { calls: { name: string; task: string; ctx: AgentCallContext }[]; maxInFlight: number };
  fn.calls = [];
  fn.maxInFlight = 0;
  return fn;
}

/** Answers `answer` after `ms` of fake time; stops (rejecting) when its signal aborts. */
export function slow(timers: ManualTimers, ms: number, answer: string): Behaviour {
  return async (_task, ctx, s) => {
    await sleep(timers, ms, ctx.signal);
    return output(s.name, answer);
  };
}
