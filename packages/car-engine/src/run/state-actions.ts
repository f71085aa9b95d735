/**
 * `state_write`, `state_read` and `assertion`: actions that dispatch no
 * tool. They read and write the run's working state directly, so their
 * effects vanish with it when the proposal aborts.
 */
import { emptyMap, evaluatePreconditions, getOwn, setOwn } from "@car/ir";
import type { Action, JsonObject, JsonValue, Precondition } from "@car/ir";
import { missingKeyMessage } from "@car/verify";
import type { WorkingState } from "../store/working-state.ts";
import { ActionFailure } from "../tools/action-failure.ts";
import type { Outcome } from "./outcomes.ts";

export function runStateAction(action: Action, params: JsonObject, working: WorkingState): Outcome {
  switch (action.type) {
    case "state_write": {
      const key = getOwn(params, "key");
      if (typeof key !== "string") return new ActionFailure(missingKeyMessage(action), "unknown");
      return { output: getOwn(params, "value") ?? null };
    }
    case "state_read": {
      const key = getOwn(params, "key");
      const keys = getOwn(params, "keys");
      if (typeof key === "string") return { output: working.get(key) ?? null };
      if (Array.isArray(keys) && keys.every((k) => typeof k === "string")) {
        const out = emptyMap();
        for (const k of keys as string[]) setOwn(out, k, working.get(k) ?? null);
        return { output: out };
      }
      return new ActionFailure(missingKeyMessage(action), "unknown");
    }
    default: {
      const checked = evaluatePreconditions(action.preconditions, stateFor(action.preconditions, working));
      return checked.ok ? { output: true } : new ActionFailure(`assertion failed: ${checked.message}`, "unknown");
    }
  }
}

/** The keys a list of preconditions reads, from the working state, as the record the evaluator takes. */
export function stateFor(preconditions: readonly Precondition[], working: WorkingState): Record<string, JsonValue> {
  const out = emptyMap();
  for (const p of preconditions) {
    const value = working.get(p.key);
    if (value !== undefined) setOwn(out, p.key, value);
  }
  return out;
}
