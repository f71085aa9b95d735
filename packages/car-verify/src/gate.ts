/**
 * The static gate: the state-independent findings that refuse a proposal
 * before anything runs — a state_write / state_read without its keys or
 * with a key that is a `$<id>.output` reference, a tool_call naming no
 * tool or an unregistered one, parameters that fail the tool's schema. `verify` reports them as issues and the engine's admission
 * enforces them, from this one implementation with one set of messages.
 *
 * Parameters holding `$<id>.output` references cannot be checked until the
 * references resolve, so their schema check is left to dispatch (which uses
 * the same message). Linear in the number of actions.
 */
import { assertParsedActions, hasOutputRefs, parseOutputRef } from "@car/ir";
import { stateActionKeys } from "@car/ir/internal";
import type { Action, SchemaError, SchemaValidator } from "@car/ir";

/** What the gate needs to know of a registered tool: its parameter check, if it has one. */
export interface GateTool {
  readonly validateParams: SchemaValidator | undefined;
}

/** The tools the gate checks against; `undefined` skips the tool findings. */
export interface GateTools {
  get(name: string): GateTool | undefined;
}

export interface GateFinding {
  /** Declaration index of the offending action. */
  index: number;
  message: string;
}

export interface GateReport {
  findings: GateFinding[];
  /** `hasRefs[i]`: action i's parameters hold output references (their schema check waits for dispatch). */
  hasRefs: Uint8Array;
}

export function staticGate(actions: readonly Action[], tools: GateTools | undefined): GateReport {
  // Public entry: actions not in parsed shape (a JSON copy edited to hold a `null`) are `invalid_proposal`, not a `TypeError` below.
  assertParsedActions(actions);
  const findings: GateFinding[] = [];
  const n = actions.length;
  const hasRefs = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const action = actions[i]!;
    if (hasOutputRefs(action.parameters)) hasRefs[i] = 1;
    const stateKeys = stateActionKeys(action);
    if (stateKeys === undefined) {
      findings.push({ index: i, message: missingKeyMessage(action) });
      continue;
    }
    const computed = hasRefs[i] === 1 ? stateKeys.find((key) => parseOutputRef(key) !== undefined) : undefined;
    if (computed !== undefined) {
      findings.push({ index: i, message: computedKeyMessage(action, computed) });
      continue;
    }
    if (action.type !== "tool_call" || tools === undefined) continue;
    if (action.tool === undefined) {
      findings.push({ index: i, message: "a tool_call that names no tool" });
      continue;
    }
    const tool = tools.get(action.tool);
    if (tool === undefined) {
      findings.push({ index: i, message: unknownToolMessage(action.tool) });
      continue;
    }
    if (hasRefs[i] === 0 && tool.validateParams !== undefined) {
      const checked = tool.validateParams(action.parameters);
      if (!checked.ok) findings.push({ index: i, message: schemaMismatchMessage(action.tool, checked.errors) });
    }
  }
  return { findings, hasRefs };
}

/** Why a state_write / state_read cannot run: it names no key. */
export function missingKeyMessage(action: Pick<Action, "type">): string {
  return `a ${action.type} needs a string 'key' parameter${action.type === "state_read" ? " or a string array 'keys'" : ""}`;
}

/**
 * Why a state key may not be a `$<id>.output` reference: DECISIONS §15 has
 * verify, simulate, conflict checks and write ordering model a state_write's
 * key as written, and a key known only at run time would escape all of them
 * (and every `require_state` policy). §2 would replace the reference, §15
 * would keep it as text; the gate refuses the proposal rather than pick one
 * silently.
 */
function computedKeyMessage(action: Pick<Action, "type">, key: string): string {
  return `a ${action.type} names the state key '${key}', an output reference; state keys must be literal strings`;
}

export function unknownToolMessage(tool: string): string {
  return `calls tool '${tool}', which is not registered`;
}

export function schemaMismatchMessage(tool: string, errors: readonly SchemaError[]): string {
  return `parameters do not match the schema of tool '${tool}': ${schemaErrorDetail(errors)}`;
}

/** Schema errors as one line (`path message (schema path); …`), for parameters and outputs alike. */
export function schemaErrorDetail(errors: readonly SchemaError[]): string {
  return errors.map((e) => `${e.path === "" ? "(root)" : e.path} ${e.message} (${e.schemaPath})`).join("; ");
}
