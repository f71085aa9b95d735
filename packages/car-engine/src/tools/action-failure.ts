/**
 * Why one dispatch attempt (or a non-tool action) failed, already classified
 * the way the audit log reports it (agent-ir-spec.md, "Execution outcome
 * event data"): `error_class` is one of five low-cardinality values, and
 * `terminal` is set only by an explicit terminal signal from the tool.
 */
import { isCarError } from "@car/ir";
import { TerminalToolError } from "./terminal-tool-error.ts";

export type ErrorClass = "timeout" | "rejected_by_policy" | "tool_error" | "validation" | "unknown";

export class ActionFailure {
  readonly message: string;
  readonly errorClass: ErrorClass;
  readonly terminal: boolean;

  constructor(message: string, errorClass: ErrorClass, terminal = false) {
    this.message = message;
    this.errorClass = errorClass;
    this.terminal = terminal;
  }
}

const POLICY_PREFIXES = ["denied by policy:", "rejected by policy:"];

/** The class of a tool's own error message: the stable policy-guard prefixes, else `tool_error`. */
export function classifyToolMessage(message: string): ErrorClass {
  return POLICY_PREFIXES.some((p) => message.startsWith(p)) ? "rejected_by_policy" : "tool_error";
}

/** Classifies whatever a tool threw or rejected with. */
export function failureFrom(error: unknown): ActionFailure {
  if (error instanceof ActionFailure) return error;
  const message = error instanceof Error ? error.message : typeof error === "string" ? error : safeString(error);
  if (error instanceof TerminalToolError) return new ActionFailure(message, classifyToolMessage(message), true);
  if (isCarError(error)) {
    if (error.code === "timeout") return new ActionFailure(message, "timeout");
    if (error.code === "invalid_output" || error.code === "schema_mismatch") return new ActionFailure(message, "validation");
    if (error.code === "terminal_failure") return new ActionFailure(message, classifyToolMessage(message), true);
  }
  return new ActionFailure(message, classifyToolMessage(message));
}

function safeString(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
