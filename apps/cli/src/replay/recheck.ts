/**
 * `car replay --check`: what the runtime would say of a recorded proposal
 * today, without running or recording anything, and where that differs
 * from what happened. Today's answer comes from the same parts admission
 * and dispatch use: the approval gate on the database's ledger (evaluated,
 * never spending a use), the policy rules loaded now, and static
 * verification against the current state; the recorded plan is simulated
 * again from the state it started from and compared with what it committed.
 *
 * Not re-checked: what depends on the run itself — a tool's output,
 * `$id.output` references resolved at dispatch, rate limits and trace rules
 * over the calls it made.
 */
import { jsonEquals, type JsonValue, type ParsedProposal } from "@car/ir";
import type { ApprovalGate, PolicyEngine } from "@car/policy";
import { simulateDetailed, verify } from "@car/verify";
import type { TraceRule } from "@car/ir";
import type { RecordedAction, RecordedRun } from "./recorded-run.ts";

/** Today's verdict on one action. */
export interface ActionNow {
  action_id: string;
  /** The gate's verdict at today's standing tier and ledger. */
  gate: "allow" | "needs_approval" | "deny";
  fingerprint: string;
  required: string;
  granted: string;
  /** Policy rules that deny it now. */
  policy_denials: string[];
  /** Verification errors that name it now. */
  verify_errors: string[];
}

export interface Difference {
  action_id: string | null;
  what: string;
}

export interface Recheck {
  /** Whether admission would take the whole proposal today (every action allowed by the gate, no verification error). */
  admitted_now: boolean;
  actions: ActionNow[];
  differences: Difference[];
}

export interface RecheckParts {
  gate: ApprovalGate;
  policies: PolicyEngine;
  traceRules: readonly TraceRule[];
  current: Readonly<Record<string, JsonValue>>;
}

export async function recheck(run: RecordedRun, parsed: ParsedProposal, parts: RecheckParts): Promise<Recheck> {
  const verified = verify(parsed, { state: { ...parts.current }, traceRules: parts.traceRules, gate: false });
  const actions: ActionNow[] = [];
  for (const action of parsed.proposal.actions) {
    const decision = await parts.gate.evaluate(action);
    actions.push({
      action_id: action.id,
      gate: decision.decision,
      fingerprint: decision.fingerprint,
      required: decision.required,
      granted: decision.granted,
      policy_denials: parts.policies.check(action, { ...parts.current }).map((v) => `${v.policy_name}: ${v.reason}`),
      verify_errors: verified.issues.filter((i) => i.severity === "error" && i.action_id === action.id).map((i) => i.message),
    });
  }
  const admitted = actions.every((a) => a.gate === "allow") && verified.issues.every((i) => i.severity !== "error" || i.action_id === undefined);
  const differences: Difference[] = [];
  for (const now of actions) {
    const then = run.actions.find((a) => a.action_id === now.action_id);
    if (then !== undefined) differences.push(...actionDifferences(then, now, admitted));
  }
  differences.push(...effectDifferences(run, parsed));
  return { admitted_now: admitted, actions, differences };
}

const ran = (a: RecordedAction): boolean => a.status === "succeeded" || a.status === "failed";
const refusedAtAdmission = (a: RecordedAction): boolean => a.status === "rejected" && (a.stage === "admission" || a.stage === "approval");

function actionDifferences(then: RecordedAction, now: ActionNow, admitted: boolean): Difference[] {
  const out: Difference[] = [];
  const at = (what: string): Difference => ({ action_id: then.action_id, what });
  const gateWhy =
    now.gate === "allow"
      ? ""
      : `${now.gate === "deny" ? "approval denied" : "approval needed"}: fingerprint ${now.fingerprint} requires ${now.required}, granted ${now.granted}`;
  if (ran(then) && !admitted) out.push(at(`it ran (${then.status}); today admission refuses the proposal${gateWhy === "" ? "" : ` — ${gateWhy}`}`));
  if (refusedAtAdmission(then) && admitted) out.push(at(`it was refused at ${then.stage} (${then.reason ?? "no reason recorded"}); today the gate admits it`));
  if (ran(then) && now.policy_denials.length > 0) out.push(at(`it ran (${then.status}); today policy denies it — ${now.policy_denials.join("; ")}`));
  if (then.status === "rejected" && then.stage === "policy" && now.policy_denials.length === 0)
    out.push(at(`policy refused it (${then.reason ?? "no reason recorded"}); today no rule denies it`));
  if (ran(then) && now.verify_errors.length > 0) out.push(at(`it ran (${then.status}); today verification finds: ${now.verify_errors.join("; ")}`));
  return out;
}

/** The recorded plan simulated again from the state it started from, against what it committed. */
function effectDifferences(run: RecordedRun, parsed: ParsedProposal): Difference[] {
  const simulated = simulateDetailed(parsed, { ...run.state_before }).state;
  const keys = new Set<string>(Object.keys(run.writes));
  for (const key of Object.keys(simulated)) if (!(Object.hasOwn(run.state_before, key) && jsonEquals(run.state_before[key]!, simulated[key]!))) keys.add(key);
  for (const key of Object.keys(run.state_before)) if (!Object.hasOwn(simulated, key)) keys.add(key);
  const out: Difference[] = [];
  const show = (v: JsonValue | null | undefined) => (v === undefined || v === null ? "absent" : JSON.stringify(v));
  for (const key of [...keys].sort()) {
    const declared = Object.hasOwn(simulated, key) ? simulated[key]! : null;
    const committed = Object.hasOwn(run.writes, key) ? run.writes[key]! : Object.hasOwn(run.state_before, key) ? run.state_before[key]! : null;
    if (declared === null && committed === null) continue;
    if (declared !== null && committed !== null && jsonEquals(declared, committed)) continue;
    out.push({ action_id: null, what: `state '${key}': the plan's declared effects give ${show(declared)}, the run left ${show(committed)}` });
  }
  return out;
}
