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
import type { ApprovalGate, PolicyEngine, PolicyState, TraceGate } from "@car/policy";
import { EVENT_KINDS } from "../events/event.ts";
import { type ApprovalEmit, decideOnRecord } from "../run/approval-events.ts";
import type { RegisteredTool } from "../tools/tool-registry.ts";
import { admitToTrace, deniedByPolicy, traceApproval, traceSuccess } from "../trace/trace-steps.ts";
import type { CompensationStep } from "./compensation-plan.ts";
import type { StepOutcome } from "./compensation-run.ts";

/** Default bound on one compensation call that declares no `timeout_ms`. */
export const DEFAULT_COMPENSATION_TIMEOUT_MS = 30_000;

/** What a call through the runtime's dispatcher came to. */
export type CallResult = { output: JsonValue } | { error: string; terminal: boolean };

export interface CompensationPath {
  /** The run whose trace the compensation's calls join (DECISIONS §20). */
  readonly run_id: string;
  readonly tools: { get(name: string): RegisteredTool | undefined };
  readonly policies: PolicyEngine;
  readonly approvalGate: ApprovalGate | undefined;
  readonly traceGate: TraceGate;
  /** The state policies see: the store's, since the proposal's own writes were rolled back. */
  readonly state: PolicyState;
  readonly timeoutMs: number;
  emit(kind: string, action_id: string, data: JsonObject): void;
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
  const violations = path.policies.size > 0 ? path.policies.check(action, path.state) : [];
  if (violations.length > 0) return refuse(path, step, violations, fail);
  const gate = path.approvalGate;
  if (gate !== undefined) {
    const emit: ApprovalEmit = (kind, _id, data) => path.emit(kind, step.action_id, data);
    const decision = await decideOnRecord(gate, action, tool.schema, emit, {
      ask: true,
      everyDecision: true,
      context: { compensation: true },
      run_id: path.run_id,
    });
    if (decision.decision !== "allow") return fail(`denied by approval gate: ${decision.reason ?? `requires ${decision.required}`}`);
    traceApproval(path.traceGate, path.run_id, action.tool!, decision);
  }
  const traced = admitToTrace(path.traceGate, path.run_id, action);
  if (traced.length > 0) return refuse(path, step, traced, fail);
  const result = await path.call(action, tool, params);
  if ("error" in result) return fail(result.error, result.terminal);
  traceSuccess(path.traceGate, path.run_id, action.tool!);
  return { ok: true };
}

function refuse(
  path: CompensationPath,
  step: CompensationStep,
  violations: readonly { policy_name: string; reason: string }[],
  fail: (e: string) => StepOutcome,
): StepOutcome {
  for (const v of violations) path.emit(EVENT_KINDS.policyViolation, step.action_id, { policy_name: v.policy_name, reason: v.reason, compensation: true });
  return fail(deniedByPolicy(violations.map((v) => ({ ...v, action_id: step.action_id }))));
}
