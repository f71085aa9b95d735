/**
 * Runs one scenario against one fresh runtime: register its tools and
 * policies, seed its state, play its steps, then check the final
 * observations. Returns every mismatch (never throws for a runtime's
 * misbehaviour — that is a finding, not a crash).
 */
import { emptyMap, getOwn, isJsonObject, setOwn, type JsonObject, type JsonValue } from "@car/ir";
import type { ConformanceRuntime, SubmitOutcome } from "./adapter.ts";
import { match, matches, type Mismatch } from "./match.ts";
import type { FinalExpectations, Scenario, ScenarioStep } from "./scenario.ts";
import { sleep, ToolBehaviours, type ToolCallRecord } from "./tool-behaviours.ts";

/** One way the runtime differed from the scenario. */
export interface ScenarioFailure extends Mismatch {
  /** `step 2 (submit)`, `final state`, `setup`, … */
  where: string;
}

/** The `where` of a failure that means "the runtime was not isolated", not "the runtime is wrong". */
export const ISOLATION = "isolation";

/** How long `poll: { until_terminal }` keeps polling a running handle. */
const POLL_DEADLINE_MS = 10_000;
const POLL_INTERVAL_MS = 20;

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The submit observation: the raw outcome plus per-action views scenarios can address by id. */
function submitView(outcome: SubmitOutcome): JsonObject {
  if ("error" in outcome) return { error: { code: outcome.error.code, message: outcome.error.message } };
  const view: JsonObject = { result: outcome.result };
  const results = isJsonObject(outcome.result) ? outcome.result["results"] : undefined;
  if (Array.isArray(results)) {
    // Action ids are data: `__proto__` is an ordinary id here.
    const byAction = emptyMap<JsonValue>();
    const statuses = emptyMap<JsonValue>();
    for (const r of results) {
      if (!isJsonObject(r) || typeof r["action_id"] !== "string") continue;
      setOwn(byAction, r["action_id"], r);
      setOwn(statuses, r["action_id"], r["status"] ?? null);
    }
    view["by_action"] = byAction;
    view["statuses"] = statuses;
  }
  return view;
}

function stepName(step: ScenarioStep, i: number): string {
  const op =
    [
      "submit",
      "verify",
      "simulate",
      "equivalent",
      "optimize",
      "poll",
      "cancel",
      "set_state",
      "set_tier",
      "approve",
      "fingerprint",
      "supervised_submit",
      "waiting_submit",
      "wait_ms",
    ].find((k) => k in step) ?? "step";
  return `step ${i + 1} (${op})`;
}

export async function runScenario(scenario: Scenario, runtime: ConformanceRuntime): Promise<ScenarioFailure[]> {
  const failures: ScenarioFailure[] = [];
  const report = (where: string, mismatches: Mismatch[]): void => {
    for (const m of mismatches) failures.push({ where, ...m });
  };
  const behaviours = new ToolBehaviours(scenario.tools ?? []);
  let eventsBefore: number;
  try {
    const leak = await leakedState(scenario, runtime);
    if (leak !== undefined) return [leak];
    // The log is append-only: what was there before belongs to someone else and is not observed.
    eventsBefore = (await runtime.getEvents()).length;
    if ((scenario.tools ?? []).length > 0) await runtime.registerTools(scenario.tools ?? [], behaviours);
    for (const p of scenario.policies ?? []) await runtime.registerPolicy(p);
    if (scenario.initial_state !== undefined) await runtime.setState(scenario.initial_state);
  } catch (err) {
    failures.push({
      where: "setup",
      path: "(root)",
      expected: "setup to succeed",
      actual: errorText(err),
      message: `setting up the runtime failed: ${errorText(err)}`,
    });
    return failures;
  }

  let lastSubmit: JsonObject | undefined;
  for (let i = 0; i < scenario.steps.length; i++) {
    const step = scenario.steps[i]!;
    const where = stepName(step, i);
    let observed: JsonValue;
    try {
      observed = await perform(step, runtime, lastSubmit);
    } catch (err) {
      observed = { throws: { message: errorText(err) } };
    }
    if ("submit" in step && isJsonObject(observed) && !("throws" in observed)) lastSubmit = observed;
    if (step.expect !== undefined) report(where, match(step.expect, observed));
    else if (isJsonObject(observed) && "throws" in observed) report(where, match({ $not: { throws: { $any: true } } }, observed));
  }

  if (scenario.expect !== undefined) {
    try {
      await checkFinal(scenario.expect, runtime, behaviours.calls, eventsBefore, report);
    } catch (err) {
      failures.push({
        where: "final",
        path: "(root)",
        expected: "observations to be readable",
        actual: errorText(err),
        message: `reading the runtime's state or events failed: ${errorText(err)}`,
      });
    }
  }
  return failures;
}

/** Shown keys of a leaked state, at most. */
const LEAKED_KEYS_SHOWN = 10;

/**
 * A scenario starts from an empty state (README, "Isolation"). Leftover keys
 * would turn every later expectation into a false finding, so the scenario
 * is not run and the report names what leaked instead.
 */
async function leakedState(scenario: Scenario, runtime: ConformanceRuntime): Promise<ScenarioFailure | undefined> {
  const keys = Object.keys(await runtime.getState());
  if (keys.length === 0) return undefined;
  const shown = keys.slice(0, LEAKED_KEYS_SHOWN).join(", ") + (keys.length > LEAKED_KEYS_SHOWN ? ` and ${keys.length - LEAKED_KEYS_SHOWN} more` : "");
  return {
    where: ISOLATION,
    path: "state",
    expected: {},
    actual: keys,
    message: `state not empty before scenario ${scenario.id}: keys ${shown} — the runtime shares state between sessions (see the README, "Isolation")`,
  };
}

function handleOf(lastSubmit: JsonObject | undefined, actionId: string): string {
  const byAction = lastSubmit?.["by_action"];
  const result = isJsonObject(byAction) ? getOwn(byAction, actionId) : undefined;
  const output = isJsonObject(result) ? result["output"] : undefined;
  const handle = isJsonObject(output) ? output["tool_handle"] : undefined;
  if (typeof handle !== "string") throw new Error(`action '${actionId}' of the last submit has no tool_handle in its output`);
  return handle;
}

async function perform(step: ScenarioStep, runtime: ConformanceRuntime, lastSubmit: JsonObject | undefined): Promise<JsonValue> {
  if (step.submit !== undefined) return submitView(await runtime.submit(step.submit));
  if (step.verify !== undefined) return runtime.verify(step.verify, step.state);
  if (step.simulate !== undefined) return { state: await runtime.simulate(step.simulate, step.state) };
  if (step.equivalent !== undefined) {
    return { equivalent: await runtime.equivalent(step.equivalent.a, step.equivalent.b, step.equivalent.test_states) };
  }
  if (step.optimize !== undefined) {
    const proposal = await runtime.optimize(step.optimize);
    const byAction = emptyMap<JsonValue>();
    const actions = isJsonObject(proposal) ? proposal["actions"] : undefined;
    if (Array.isArray(actions)) for (const a of actions) if (isJsonObject(a) && typeof a["id"] === "string") setOwn(byAction, a["id"], a);
    // With a `state`, the optimized proposal is simulated from it too: an optimization must not change what the plan does.
    if (step.state === undefined) return { proposal, by_action: byAction };
    return { proposal, by_action: byAction, simulated: await runtime.simulate(proposal, step.state) };
  }
  if (step.poll !== undefined) {
    const handle = handleOf(lastSubmit, step.poll.handle_of);
    if (step.poll.until_terminal !== true) return runtime.poll(handle);
    return pollUntilTerminal(runtime, handle);
  }
  if (step.cancel !== undefined) return runtime.cancel(handleOf(lastSubmit, step.cancel.handle_of));
  if (step.set_state !== undefined) {
    await runtime.setState(step.set_state);
    return null;
  }
  if (step.set_tier !== undefined) {
    if (runtime.setTier === undefined) throw new Error("the runtime claims `approvals` but its adapter has no setTier");
    await runtime.setTier(step.set_tier);
    return null;
  }
  if (step.approve !== undefined) {
    if (runtime.approve === undefined) throw new Error("the runtime claims `approvals` but its adapter has no approve");
    await runtime.approve(step.approve);
    return null;
  }
  if (step.supervised_submit !== undefined) {
    if (runtime.supervisedSubmit === undefined) throw new Error("the runtime claims `supervision` but its adapter has no supervisedSubmit");
    const { outcome, ...seen } = await runtime.supervisedSubmit(step.supervised_submit);
    return { ...submitView(outcome), ...(seen as JsonObject) };
  }
  if (step.waiting_submit !== undefined) {
    if (runtime.waitingSubmit === undefined) throw new Error("the runtime claims `waiting-approvals` but its adapter has no waitingSubmit");
    const { outcome, ...seen } = await runtime.waitingSubmit(step.waiting_submit);
    return { ...submitView(outcome), ...(seen as JsonObject) };
  }
  if (step.fingerprint !== undefined) {
    if (runtime.fingerprint === undefined) throw new Error("the runtime claims `approvals` but its adapter has no fingerprint");
    const fingerprint = await runtime.fingerprint(step.fingerprint.action);
    const byAction = lastSubmit?.["by_action"];
    const result = isJsonObject(byAction) ? getOwn(byAction, step.fingerprint.named_in) : undefined;
    const error = isJsonObject(result) ? result["error"] : undefined;
    return { fingerprint, named: typeof error === "string" && fingerprint !== "" && error.includes(fingerprint) };
  }
  if (step.wait_ms !== undefined) {
    await sleep(step.wait_ms);
    return null;
  }
  throw new Error("the step names no operation");
}

/** Polls until the handle reports a terminal status; chunks of every poll are concatenated. */
async function pollUntilTerminal(runtime: ConformanceRuntime, handle: string): Promise<JsonValue> {
  const chunks: JsonValue[] = [];
  const deadline = performance.now() + POLL_DEADLINE_MS;
  for (;;) {
    const polled = await runtime.poll(handle);
    if (!isJsonObject(polled)) return polled;
    if (Array.isArray(polled["chunks"])) chunks.push(...polled["chunks"]);
    if (polled["status"] !== "running" || performance.now() > deadline) return { ...polled, chunks };
    await sleep(POLL_INTERVAL_MS);
  }
}

function callsOf(calls: readonly ToolCallRecord[], actionId: string): ToolCallRecord[] {
  return calls.filter((c) => c.action_id === actionId);
}

async function checkFinal(
  expect: FinalExpectations,
  runtime: ConformanceRuntime,
  calls: readonly ToolCallRecord[],
  eventsBefore: number,
  report: (where: string, m: Mismatch[]) => void,
): Promise<void> {
  if (expect.state !== undefined || expect.state_includes !== undefined || expect.state_absent !== undefined) {
    const state = await runtime.getState();
    if (expect.state !== undefined) report("final state", match({ $exact: expect.state }, state));
    if (expect.state_includes !== undefined) report("final state", match(expect.state_includes, state));
    for (const key of expect.state_absent ?? []) report("final state", match({ $absent: true }, Object.hasOwn(state, key) ? state[key] : undefined, key));
  }
  if (expect.events !== undefined || expect.events_absent !== undefined || expect.event_text_absent !== undefined) {
    const events = (await runtime.getEvents()).slice(eventsBefore);
    for (const pattern of expect.events ?? []) {
      if (!events.some((e) => matches(pattern, e))) {
        const kind = pattern["kind"];
        const sameKind = events.filter((e) => e["kind"] === kind);
        report("events", [{ path: "events", expected: pattern, actual: sameKind, message: `no event matches (events of that kind shown)` }]);
      }
    }
    for (const pattern of expect.events_absent ?? []) {
      const hit = events.find((e) => matches(pattern, e));
      if (hit !== undefined)
        report("events", [{ path: "events", expected: { $not: pattern }, actual: hit, message: "an event that must not exist was logged" }]);
    }
    const leak = expect.event_text_absent;
    if (leak !== undefined) {
      for (const e of events) {
        if (leak.kinds !== undefined && !leak.kinds.includes(String(e["kind"]))) continue;
        const text = JSON.stringify(e);
        const found = leak.text.filter((t) => text.includes(t));
        if (found.length > 0)
          report("events", [
            {
              path: "events",
              expected: { $not: { $includes: found[0]! } },
              actual: e,
              message: `an event carries ${found.map((t) => JSON.stringify(t)).join(", ")}`,
            },
          ]);
      }
    }
  }
  const c = expect.calls;
  if (c !== undefined) {
    const observed = calls.map(callView);
    if (c.total !== undefined) report("tool calls", match(c.total, observed.length, "total"));
    for (const [tool, n] of Object.entries(c.count ?? {})) report("tool calls", match(n, observed.filter((o) => o["tool"] === tool).length, `count.${tool}`));
    for (const pattern of c.some ?? []) {
      if (!observed.some((o) => matches(pattern, o)))
        report("tool calls", [{ path: "calls", expected: pattern, actual: observed, message: "no tool call matches" }]);
    }
    for (const pattern of c.none ?? []) {
      const hit = observed.find((o) => matches(pattern, o));
      if (hit !== undefined)
        report("tool calls", [{ path: "calls", expected: { $not: pattern }, actual: hit, message: "a tool call that must not happen was made" }]);
    }
    if (c.every !== undefined) observed.forEach((o, i) => report("tool calls", match(c.every!, o, `calls[${i}]`)));
  }
  for (const [a, b] of expect.happens_before ?? []) {
    const ca = callsOf(calls, a);
    const cb = callsOf(calls, b);
    if (ca.length === 0 || cb.length === 0) {
      report("ordering", [
        { path: `${a} → ${b}`, expected: "both actions called", actual: { [a]: ca.length, [b]: cb.length }, message: "an action was never called" },
      ]);
      continue;
    }
    const aEnd = Math.max(...ca.map((x) => x.ended_ms ?? Infinity));
    const bStart = Math.min(...cb.map((x) => x.started_ms));
    if (!(aEnd <= bStart))
      report("ordering", [
        {
          path: `${a} → ${b}`,
          expected: `'${a}' answered before '${b}' starts`,
          actual: { [`${a}_ended_ms`]: round(aEnd), [`${b}_started_ms`]: round(bStart) },
          message: `'${b}' started before '${a}' finished`,
        },
      ]);
  }
  for (const [a, b] of expect.overlapping ?? []) {
    const ca = callsOf(calls, a)[0];
    const cb = callsOf(calls, b)[0];
    if (ca === undefined || cb === undefined) {
      report("concurrency", [{ path: `${a} ∥ ${b}`, expected: "both actions called", actual: null, message: "an action was never called" }]);
      continue;
    }
    const overlap = ca.started_ms < (cb.ended_ms ?? Infinity) && cb.started_ms < (ca.ended_ms ?? Infinity);
    if (!overlap)
      report("concurrency", [
        {
          path: `${a} ∥ ${b}`,
          expected: "calls in flight together",
          actual: { [a]: [round(ca.started_ms), round(ca.ended_ms)], [b]: [round(cb.started_ms), round(cb.ended_ms)] },
          message: "the calls ran one after the other",
        },
      ]);
  }
  for (const [a, b, ms] of expect.min_gap_ms ?? []) {
    const ca = callsOf(calls, a)[0];
    const cb = callsOf(calls, b)[0];
    if (ca === undefined || cb === undefined) {
      report("timing", [{ path: `${a} → ${b}`, expected: "both actions called", actual: null, message: "an action was never called" }]);
      continue;
    }
    const gap = cb.started_ms - ca.started_ms;
    if (gap < ms)
      report("timing", [{ path: `${a} → ${b}`, expected: { $gte: ms }, actual: round(gap), message: `'${b}' started only ${round(gap)} ms after '${a}'` }]);
  }
}

function round(n: number | undefined): number | null {
  return n === undefined || !Number.isFinite(n) ? null : Math.round(n);
}

/** A call as call expectations see it (the callback contract's fields plus the outcome). */
function callView(c: ToolCallRecord): JsonObject {
  const v: JsonObject = { tool: c.tool, params: c.params, action_id: c.action_id };
  if (c.attempt !== undefined) v["attempt"] = c.attempt;
  if (c.request_id !== undefined) v["request_id"] = c.request_id;
  if (c.timeout_ms !== undefined) v["timeout_ms"] = c.timeout_ms;
  if (c.session_id !== undefined) v["session_id"] = c.session_id;
  if (c.outcome !== undefined) v["outcome"] = c.outcome;
  return v;
}
