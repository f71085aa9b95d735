/**
 * What a rollback with compensation has to do: for every forward action that
 * succeeded, in reverse order of completion, either nothing (`reversible`:
 * restoring state undoes it), a compensation step (`compensable` with a
 * runnable compensation), or a gap the result must name (`irreversible`, a
 * missing or broken compensation — `undoGap`, the predicate `verify`'s
 * `rollback_contract` uses, so the two always agree).
 *
 * A `tool` compensation becomes a tool call under the compensated action's
 * id, with its `timeout_ms`, and its retries when its `failure_behavior` is
 * `retry`. An `action_ref` compensation runs the named action as declared
 * (its own parameters — `$id.output` references resolve against the forward
 * run's outputs — timeout and retries).
 *
 * The plan is recorded (`compensation_planned`) with each step's parameters
 * as declared, references and all, and each distinct reference's value
 * once (`references`): twenty steps referencing one 4 MB output record it
 * once, not twenty times. A resumed phase substitutes them back.
 */
import { CarError, emptyMap, parseOutputRef, setOwn, toolCall } from "@car/ir";
import { undoGap } from "@car/ir/internal";
import type { Action, JsonObject, JsonValue, UndoGap } from "@car/ir";

export interface CompensationStep {
  /** The forward action being undone; events and results carry its id. */
  readonly action_id: string;
  readonly action_index: number;
  /** What is dispatched. */
  readonly call: Action;
  /** For an `action_ref` compensation, the compensation action's index. */
  readonly ref_index?: number;
  /** Why the step cannot be dispatched (its `$id.output` references did not resolve); it then fails with this. */
  readonly error?: string;
  /** The parameters as declared, when `call` holds them with their references resolved: what the record keeps. */
  readonly declared?: JsonObject;
}

export interface CompensationGap {
  readonly action_id: string;
  readonly reason: UndoGap;
}

export interface CompensationPlan {
  readonly steps: readonly CompensationStep[];
  /** Succeeded actions nothing can undo, in reverse completion order. */
  readonly gaps: readonly CompensationGap[];
  /** Each distinct `$id.output` reference of the dispatchable steps, with its value (recorded once, however many steps hold it). */
  readonly references?: JsonObject;
}

/** `completed`: indices of the forward actions that succeeded, in completion order. */
export function planCompensation(actions: readonly Action[], completed: readonly number[], indexOf: ReadonlyMap<string, number>): CompensationPlan {
  const steps: CompensationStep[] = [];
  const gaps: CompensationGap[] = [];
  for (let k = completed.length - 1; k >= 0; k--) {
    const i = completed[k]!;
    const action = actions[i]!;
    const gap = undoGap(action, indexOf);
    if (gap !== undefined) {
      gaps.push({ action_id: action.id, reason: gap });
      continue;
    }
    const comp = action.compensation;
    if (action.reversibility !== "compensable" || comp === undefined) continue;
    if (comp.type === "tool") {
      steps.push({ action_id: action.id, action_index: i, call: compensationCall(action, comp.tool, comp.parameters) });
    } else {
      const j = indexOf.get(comp.action_id)!;
      steps.push({ action_id: action.id, action_index: i, call: actions[j]!, ref_index: j });
    }
  }
  return { steps, gaps };
}

/**
 * The plan as `compensation_planned` recorded it (tool compensations with
 * their parameters; compensation actions with their parameters as declared,
 * each reference then replaced by its recorded value), rebuilt against the
 * proposal — how an interrupted phase resumes. A record without
 * `references` holds resolved parameters already.
 */
export function planFromRecord(actions: readonly Action[], indexOf: ReadonlyMap<string, number>, record: JsonObject): CompensationPlan {
  const steps: CompensationStep[] = [];
  const references = record["references"] as JsonObject | undefined;
  for (const raw of (record["steps"] ?? []) as JsonObject[]) {
    const i = indexOf.get(raw["action_id"] as string);
    if (i === undefined) continue;
    const parameters = raw["parameters"] as JsonObject;
    const ref = typeof raw["compensation_action"] === "string" ? indexOf.get(raw["compensation_action"]) : undefined;
    if (ref === undefined) {
      steps.push({ action_id: actions[i]!.id, action_index: i, call: compensationCall(actions[i]!, raw["tool"] as string, parameters) });
      continue;
    }
    const step = { action_id: actions[i]!.id, action_index: i, ref_index: ref };
    try {
      const resolved = references === undefined ? parameters : (substitute(parameters, references, "") as JsonObject);
      steps.push({ ...step, call: { ...actions[ref]!, parameters: resolved } });
    } catch (error) {
      steps.push({ ...step, call: actions[ref]!, error: error instanceof Error ? error.message : String(error) });
    }
  }
  const gaps = ((record["not_undoable"] ?? []) as JsonObject[]).map((g) => ({ action_id: g["action_id"] as string, reason: g["reason"] as UndoGap }));
  return { steps, gaps };
}

/** Every distinct whole-string `$id.output` reference in `value`, added to `into`. */
export function referencesIn(value: JsonValue, into: Set<string>): void {
  if (typeof value === "string") {
    if (parseOutputRef(value) !== undefined) into.add(value);
  } else if (Array.isArray(value)) for (const v of value) referencesIn(v, into);
  else if (value !== null && typeof value === "object") for (const k of Object.keys(value)) referencesIn(value[k]!, into);
}

/** `value` with each reference replaced by its recorded value; a reference the record lacks is `not_found`. */
function substitute(value: JsonValue, references: JsonObject, pointer: string): JsonValue {
  if (typeof value === "string") {
    if (parseOutputRef(value) === undefined) return value;
    if (!Object.hasOwn(references, value)) throw new CarError("not_found", `reference '${value}' at '${pointer}': the recorded plan has no value for it`);
    return references[value]!;
  }
  if (Array.isArray(value)) return value.map((v, i) => substitute(v, references, `${pointer}/${i}`));
  if (value !== null && typeof value === "object") {
    const out = emptyMap();
    for (const key of Object.keys(value)) setOwn(out, key, substitute(value[key]!, references, `${pointer}/${key}`));
    return out;
  }
  return value;
}

function compensationCall(action: Action, tool: string, parameters: JsonObject): Action {
  const call = toolCall(tool, parameters, {
    id: action.id,
    max_retries: action.max_retries,
    failure_behavior: action.failure_behavior === "retry" ? "retry" : "abort",
  });
  if (action.timeout_ms !== undefined) call.timeout_ms = action.timeout_ms;
  return call;
}

/** The words a result uses for a gap. */
export function gapText(reason: UndoGap): string {
  switch (reason) {
    case "irreversible":
      return "the action is irreversible";
    case "missing_compensation":
      return "it is compensable but declares no compensation";
    case "broken_compensation":
      return "its compensation names no action of the proposal";
  }
}
