/**
 * One compensation step through the runtime's dispatch path, in the order a
 * forward tool call takes it: the tool and its parameter schema, the
 * policies, the approval gate, the TraceGate, then the call itself with its
 * timeout and retries (the runtime's dispatcher). Each refusal is the same
 * event a forward action would produce (`policy_violation`,
 * `approval_requested` / `approval_decided`), and a refused or failed step is a failed compensation,
 * never a crash.
 *
 * A step with no `timeout_ms` gets the runtime's compensation timeout: a
 * compensation that hangs must not hold the rollback forever.
 */
import type { JsonObject, JsonValue } from "@car/ir";
import type { Action } from "@car/ir";
import type { ApprovalDecision, PolicyState } from "@car/policy";
import { gateCall, type GateRules } from "../gates/call-gate.ts";
import type { RegisteredTool } from "../tools/tool-registry.ts";
import { traceSuccess } from "../trace/trace-steps.ts";
import type { CompensationStep } from "./compensation-plan.ts";
import type { StepOutcome } from "./compensation-run.ts";

/** Default bound on one compensation call that declares no `timeout_ms`. */
export const DEFAULT_COMPENSATION_TIMEOUT_MS = 30_000;

/** What a call through the runtime's dispatcher came to. */
export type CallResult = { output: JsonValue } | { error: string; terminal: boolean };

/** Every gate event of a compensation step says so. */
const COMPENSATION_CONTEXT: JsonObject = Object.freeze({ compensation: true }) as JsonObject;

export interface CompensationPath {
  /** The run whose trace the compensation's calls join (DECISIONS §20). */
  readonly run_id: string;
  readonly tools: { get(name: string): RegisteredTool | undefined };
  /** The runtime's rules: the same call gate a forward action passes. */
  readonly gates: GateRules;
  /** The state policies see: the store's, since the proposal's own writes were rolled back. */
  readonly state: PolicyState;
  readonly timeoutMs: number;
  emit(kind: string, action_id: string, data: JsonObject): void;
  /** The approval gate held the step (for the run's report). */
  held(action_id: string, decision: ApprovalDecision): void;
  call(action: Action, tool: RegisteredTool, params: JsonObject): Promise<CallResult>;
}

export async function dispatchStep(path: CompensationPath, step: CompensationStep): Promise<StepOutcome> {
  const fail = (error: string, terminal = false): StepOutcome => ({ ok: false, error, terminal });
  if (step.error !== undefined) return fail(step.error);
  let action = step.call;
  if (action.type !== "tool_call" || action.tool === undefined) return fail(`compensation action '${action.id}' is not a tool call`);
  const params = action.parameters;
  if (action.timeout_ms === undefined) action = { ...action, timeout_ms: path.timeoutMs };
  const tool = path.tools.get(action.tool!);
  if (tool === undefined) return fail(`unknown tool '${action.tool}'`);
  if (tool.validateParams !== undefined) {
    const checked = tool.validateParams(params);
    if (!checked.ok) return fail(`parameters do not match the schema of tool '${tool.schema.name}'`);
  }
  // An undo is a form no admission judged: the approval gate is always asked.
  const call = { action, recordAs: step.action_id, run_id: path.run_id, state: path.state, approval: { schema: tool.schema }, context: COMPENSATION_CONTEXT };
  const verdict = await gateCall(path.gates, call, path.emit);
  if (typeof verdict === "object") {
    if (verdict.stage === "approval") path.held(step.action_id, verdict.decision);
    return fail(verdict.message);
  }
  const result = await path.call(action, tool, params);
  if ("error" in result) return fail(result.error, result.terminal);
  traceSuccess(path.gates.traceGate, path.run_id, action.tool!);
  return { ok: true };
}
