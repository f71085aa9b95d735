/**
 * A hand-written structural check for the common shape of a proposal — the
 * one a planner emits: known fields of the expected types, no preconditions,
 * assumptions or compensation. `true` means the JSON Schema would accept the
 * value too; `false` means only "not sure", and the caller then runs the
 * schema validator, which alone decides and words every problem. So this is
 * never the judge of an invalid proposal, only a shortcut past ajv (whose
 * per-action call allocates its options and pointer strings) for valid ones.
 */

export const ACTION_TYPES: ReadonlySet<string> = new Set(["tool_call", "state_write", "state_read", "assertion"]);
export const INVOCATION_MODES: ReadonlySet<string> = new Set(["one_shot", "streaming", "long_running"]);
export const REVERSIBILITIES: ReadonlySet<string> = new Set(["reversible", "compensable", "irreversible"]);
export const FAILURE_BEHAVIORS: ReadonlySet<string> = new Set(["abort", "retry", "skip"]);
/** The schema's `timestamp` pattern (action-proposal.json). */
const TIMESTAMP = /^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$/u;
const U32_MAX = 4294967295;

const hasOwn = Object.hasOwn;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isStringArray(value: unknown): boolean {
  if (!Array.isArray(value)) return false;
  for (let i = 0; i < value.length; i++) if (typeof value[i] !== "string") return false;
  return true;
}

/** What JSON Schema's `integer` accepts: a finite number with no fraction. */
function isInteger(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value) && value % 1 === 0;
}

/** Whether one known action field surely satisfies its schema; unknown fields are free. */
function actionFieldOk(key: string, value: unknown): boolean {
  switch (key) {
    case "id":
      return typeof value === "string";
    case "type":
      return typeof value === "string" && ACTION_TYPES.has(value);
    case "tool":
      return typeof value === "string" || value === null;
    case "parameters":
    case "expected_effects":
    case "metadata":
      return isObject(value);
    case "dependencies":
    case "state_dependencies":
    case "read_set":
    case "write_set":
      return isStringArray(value);
    case "preconditions":
    case "assumptions":
      return Array.isArray(value) && value.length === 0; // their items: left to the schema
    case "compensation":
      return value === null; // a compensation: left to the schema
    case "invocation_mode":
      return typeof value === "string" && INVOCATION_MODES.has(value);
    case "reversibility":
      return typeof value === "string" && REVERSIBILITIES.has(value);
    case "failure_behavior":
      return typeof value === "string" && FAILURE_BEHAVIORS.has(value);
    case "idempotent":
      return typeof value === "boolean";
    case "max_retries":
      return isInteger(value) && value >= 0 && value <= U32_MAX;
    case "timeout_ms":
      return value === null || (isInteger(value) && value >= 0);
    default:
      return true;
  }
}

function surelyValidAction(action: unknown): boolean {
  if (!isObject(action)) return false;
  if (!hasOwn(action, "type")) return false;
  for (const key in action) {
    if (!hasOwn(action, key)) return false; // an inherited enumerable field: let the schema decide
    if (!actionFieldOk(key, action[key])) return false;
  }
  // `if type is tool_call then tool is a string` (a null tool is only for other types).
  return action["type"] !== "tool_call" || typeof action["tool"] === "string";
}

/**
 * True only when `value` surely matches the ActionProposal schema (and so
 * `shapeProblems("actionProposal", value)` would be empty); false when it
 * does not or when this check cannot tell.
 */
export function surelyValidProposal(value: unknown): boolean {
  if (!isObject(value)) return false;
  for (const key in value) {
    if (!hasOwn(value, key)) return false;
    const field = value[key];
    switch (key) {
      case "id":
      case "source":
        if (typeof field !== "string") return false;
        break;
      case "timestamp":
        if (typeof field !== "string" || !TIMESTAMP.test(field)) return false;
        break;
      case "context":
        if (!isObject(field)) return false;
        break;
      case "actions":
        if (!Array.isArray(field)) return false;
        for (let i = 0; i < field.length; i++) if (!surelyValidAction(field[i])) return false;
        break;
    }
  }
  return hasOwn(value, "actions");
}
