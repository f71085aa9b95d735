/**
 * The structural guard for an *already parsed* proposal handed to a public
 * function: every field the parsed types promise, of its type, every array
 * element too. A JSON copy of a parsed proposal passes it and is used as it
 * is (no second parse); a copy someone edited (`preconditions: [null]`, a
 * number where an id belongs) fails it, and the caller parses it properly,
 * or refuses it with `invalid_proposal`, instead of crashing on it with a
 * `TypeError` halfway through a check. One pass over the actions, no deeper
 * than the fields (parameter and effect values are any JSON).
 */
import { CarError } from "./errors.ts";
import { ACTION_TYPES, FAILURE_BEHAVIORS, INVOCATION_MODES, REVERSIBILITIES } from "./proposal-shape.ts";
import type { Action, ActionProposal } from "./types.ts";

const STRING_ARRAYS = ["dependencies", "state_dependencies", "read_set", "write_set"] as const;
const OBJECTS = ["parameters", "expected_effects", "metadata"] as const;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/** What is wrong with `action` as a parsed action (a pointer-relative message), or `undefined`. */
function parsedActionProblem(action: unknown): string | undefined {
  if (!isObject(action)) return "is not an object";
  if (typeof action["id"] !== "string") return "/id is not a string";
  if (typeof action["type"] !== "string" || !ACTION_TYPES.has(action["type"])) return "/type is not an action type";
  if (action["tool"] !== undefined && typeof action["tool"] !== "string") return "/tool is not a string";
  for (const f of OBJECTS) if (!isObject(action[f])) return `/${f} is not an object`;
  for (const f of STRING_ARRAYS) {
    const list = action[f];
    if (!Array.isArray(list)) return `/${f} is not an array`;
    for (let i = 0; i < list.length; i++) if (typeof list[i] !== "string") return `/${f}/${i} is not a string`;
  }
  const pre = action["preconditions"];
  if (!Array.isArray(pre)) return "/preconditions is not an array";
  for (let i = 0; i < pre.length; i++) {
    const p: unknown = pre[i];
    if (!isObject(p) || typeof p["key"] !== "string" || typeof p["operator"] !== "string" || typeof p["description"] !== "string" || p["value"] === undefined) {
      return `/preconditions/${i} is not a parsed precondition`;
    }
  }
  const assumptions = action["assumptions"];
  if (!Array.isArray(assumptions)) return "/assumptions is not an array";
  for (let i = 0; i < assumptions.length; i++) {
    const a: unknown = assumptions[i];
    if (!isObject(a) || typeof a["key"] !== "string" || (a["read_version"] !== undefined && !isFiniteNumber(a["read_version"]))) {
      return `/assumptions/${i} is not a parsed assumption`;
    }
  }
  if (!INVOCATION_MODES.has(action["invocation_mode"] as string)) return "/invocation_mode is not an invocation mode";
  if (!REVERSIBILITIES.has(action["reversibility"] as string)) return "/reversibility is not a reversibility";
  if (!FAILURE_BEHAVIORS.has(action["failure_behavior"] as string)) return "/failure_behavior is not a failure behavior";
  if (typeof action["idempotent"] !== "boolean") return "/idempotent is not a boolean";
  if (!isFiniteNumber(action["max_retries"])) return "/max_retries is not a number";
  if (action["timeout_ms"] !== undefined && !isFiniteNumber(action["timeout_ms"])) return "/timeout_ms is not a number";
  const c = action["compensation"];
  if (c !== undefined) {
    const ok =
      isObject(c) &&
      (c["type"] === "tool" ? typeof c["tool"] === "string" && isObject(c["parameters"]) : c["type"] === "action_ref" && typeof c["action_id"] === "string");
    if (!ok) return "/compensation is not a parsed compensation";
  }
  return undefined;
}

/** Whether `value` has the parsed proposal shape throughout (see the file comment). */
export function isParsedShape(value: unknown): value is ActionProposal {
  return (
    isObject(value) &&
    typeof value["id"] === "string" &&
    typeof value["source"] === "string" &&
    typeof value["timestamp"] === "string" &&
    isObject(value["context"]) &&
    Array.isArray(value["actions"]) &&
    value["actions"].every((a) => parsedActionProblem(a) === undefined)
  );
}

/** `actions` as parsed actions, or `invalid_proposal` naming the first that is not one. */
export function assertParsedActions(actions: unknown, pointer = "/actions"): asserts actions is Action[] {
  if (!Array.isArray(actions))
    throw new CarError("invalid_proposal", `${pointer} is not an array of parsed actions`, { problems: [{ pointer, message: "not an array" }] });
  for (let i = 0; i < actions.length; i++) {
    const problem = parsedActionProblem(actions[i]);
    if (problem === undefined) continue;
    const at = `${pointer}/${i}${problem.startsWith("/") ? problem.slice(0, problem.indexOf(" ")) : ""}`;
    const message = problem.startsWith("/") ? problem.slice(problem.indexOf(" ") + 1) : problem;
    throw new CarError("invalid_proposal", `invalid proposal: ${at} ${message}`, { problems: [{ pointer: at, message }] });
  }
}
