/**
 * Building actions in code. Every factory returns a complete `Action`: each
 * field at its documented default and a generated id, so code never has to
 * know the defaults and never produces a half-built action. There is no
 * type-less constructor on purpose: a `tool_call` naming no tool is invalid
 * the moment it exists.
 */
import { randomIds, type IdGenerator } from "./clock.ts";
import { ACTION_DEFAULTS } from "./defaults.ts";
import { cloneJson, emptyMap, setOwn } from "./json.ts";
import type { PreconditionInput } from "./input-types.ts";
import type { Action, ActionType, JsonObject, JsonValue, Precondition } from "./types.ts";

/** Fields a caller may set on a new action; `type` is fixed by the factory. */
export type ActionOverrides = Partial<Omit<Action, "type">>;

export interface FactoryOptions {
  /** Source of the generated id when `overrides.id` is absent. */
  ids?: IdGenerator;
}

export function newAction(type: ActionType, overrides: ActionOverrides = {}, options: FactoryOptions = {}): Action {
  const action: Action = {
    id: overrides.id ?? (options.ids ?? randomIds).next(),
    type,
    parameters: emptyMap(),
    preconditions: [],
    expected_effects: emptyMap(),
    dependencies: [],
    state_dependencies: [],
    read_set: [],
    write_set: [],
    assumptions: [],
    ...ACTION_DEFAULTS,
    metadata: emptyMap(),
  };
  for (const key of Object.keys(overrides) as (keyof ActionOverrides)[]) {
    const value = overrides[key];
    if (value === undefined || key === "id") continue;
    // Copies: the action must not share mutable maps or lists with the caller.
    setOwn(action as unknown as Record<string, unknown>, key, cloneJson(value as unknown as JsonValue));
  }
  return action;
}

/** A `tool_call` of `tool` with `parameters`. */
export function toolCall(tool: string, parameters: JsonObject = {}, overrides: ActionOverrides = {}, options: FactoryOptions = {}): Action {
  return newAction("tool_call", { ...overrides, tool, parameters }, options);
}

/**
 * A `state_write` of `value` to `key`: the executor reads the `{ key, value }`
 * parameters, the static verifier reads `expected_effects`, so both are set.
 */
export function stateWrite(key: string, value: JsonValue, overrides: ActionOverrides = {}, options: FactoryOptions = {}): Action {
  const parameters = emptyMap();
  setOwn(parameters, "key", key);
  setOwn(parameters, "value", cloneJson(value));
  const effects = emptyMap();
  setOwn(effects, key, cloneJson(value));
  return newAction("state_write", { ...overrides, parameters, expected_effects: effects }, options);
}

/** A `state_read` of `key`. */
export function stateRead(key: string, overrides: ActionOverrides = {}, options: FactoryOptions = {}): Action {
  const parameters = emptyMap();
  setOwn(parameters, "key", key);
  return newAction("state_read", { ...overrides, parameters }, options);
}

/** A complete precondition: operator `eq`, value `null` and an empty description unless given. */
export function precondition(input: PreconditionInput): Precondition {
  return { key: input.key, operator: input.operator ?? "eq", value: cloneJson(input.value ?? null), description: input.description ?? "" };
}

/** An `assertion` that fails the proposal unless every precondition holds. */
export function assertion(preconditions: readonly PreconditionInput[], overrides: ActionOverrides = {}, options: FactoryOptions = {}): Action {
  return newAction("assertion", { ...overrides, preconditions: preconditions.map(precondition) }, options);
}
