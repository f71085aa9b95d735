/**
 * Typed IR → wire JSON. Known fields are written in the spec's order,
 * optional ones omitted when absent (`tool`, `compensation`, `timeout_ms`)
 * and the true-only markers (`terminal`, `rolled_back`) omitted unless true;
 * unknown fields kept by the parser are re-emitted after them. The result is
 * a fresh tree: mutating it never touches the IR value.
 */
import {
  ACTION_FIELDS,
  ACTION_RESULT_FIELDS,
  ASSUMPTION_FIELDS,
  COST_SUMMARY_FIELDS,
  PRECONDITION_FIELDS,
  PROPOSAL_FIELDS,
  PROPOSAL_RESULT_FIELDS,
  REF_COMPENSATION_FIELDS,
  TOOL_COMPENSATION_FIELDS,
  copyUnknownFields,
} from "./fields.ts";
import { cloneJson, emptyMap, setOwn } from "./json.ts";
import { guarded } from "./input.ts";
import type {
  Action,
  ActionProposal,
  ActionResult,
  Compensation,
  CostSummary,
  JsonObject,
  JsonValue,
  Precondition,
  ProposalResult,
  StateAssumption,
} from "./types.ts";

function serializePrecondition(p: Precondition): JsonObject {
  const out: JsonObject = { key: p.key, operator: p.operator, value: cloneJson(p.value), description: p.description };
  copyUnknownFields(p, out, PRECONDITION_FIELDS);
  return out;
}

function serializeAssumption(a: StateAssumption): JsonObject {
  const out: JsonObject = { key: a.key };
  if (a.expected_value !== undefined) out["expected_value"] = cloneJson(a.expected_value);
  if (a.read_version !== undefined) out["read_version"] = a.read_version;
  copyUnknownFields(a, out, ASSUMPTION_FIELDS);
  return out;
}

function serializeCompensation(c: Compensation): JsonObject {
  if (c.type === "tool") {
    const out: JsonObject = { type: "tool", tool: c.tool, parameters: cloneJson(c.parameters) };
    copyUnknownFields(c, out, TOOL_COMPENSATION_FIELDS);
    return out;
  }
  const out: JsonObject = { type: "action_ref", action_id: c.action_id };
  copyUnknownFields(c, out, REF_COMPENSATION_FIELDS);
  return out;
}

/** The action as wire JSON; an action that is not in parsed shape is `invalid_proposal`, never a `TypeError`. */
export function serializeAction(a: Action): JsonObject {
  return guarded("invalid_proposal", "action", () => actionJson(a));
}

function actionJson(a: Action): JsonObject {
  const out: JsonObject = { id: a.id, type: a.type };
  if (a.tool !== undefined) out["tool"] = a.tool;
  out["parameters"] = cloneJson(a.parameters);
  out["preconditions"] = a.preconditions.map(serializePrecondition);
  out["expected_effects"] = cloneJson(a.expected_effects);
  out["dependencies"] = a.dependencies.slice();
  out["state_dependencies"] = a.state_dependencies.slice();
  out["read_set"] = a.read_set.slice();
  out["write_set"] = a.write_set.slice();
  out["assumptions"] = a.assumptions.map(serializeAssumption);
  out["invocation_mode"] = a.invocation_mode;
  out["reversibility"] = a.reversibility;
  if (a.compensation !== undefined) out["compensation"] = serializeCompensation(a.compensation);
  out["idempotent"] = a.idempotent;
  out["max_retries"] = a.max_retries;
  out["failure_behavior"] = a.failure_behavior;
  if (a.timeout_ms !== undefined) out["timeout_ms"] = a.timeout_ms;
  out["metadata"] = cloneJson(a.metadata);
  copyUnknownFields(a, out, ACTION_FIELDS);
  return out;
}

/** The proposal as wire JSON; a proposal that is not in parsed shape is `invalid_proposal`, never a `TypeError`. */
export function serializeProposal(p: ActionProposal): JsonObject {
  return guarded("invalid_proposal", "proposal", () => {
    const out: JsonObject = {
      id: p.id,
      source: p.source,
      timestamp: p.timestamp,
      actions: p.actions.map(actionJson),
      context: cloneJson(p.context),
    };
    copyUnknownFields(p, out, PROPOSAL_FIELDS);
    return out;
  });
}

/** The proposal as JSON text (compact). */
export function stringifyProposal(p: ActionProposal): string {
  return JSON.stringify(serializeProposal(p));
}

export function serializeActionResult(r: ActionResult): JsonObject {
  const changes = emptyMap();
  for (const key of Object.keys(r.state_changes)) setOwn(changes, key, cloneJson(r.state_changes[key] as unknown as JsonValue));
  const out: JsonObject = {
    action_id: r.action_id,
    status: r.status,
    output: cloneJson(r.output),
    error: r.error,
    state_changes: changes,
    duration_ms: r.duration_ms,
    timestamp: r.timestamp,
  };
  if (r.terminal === true) out["terminal"] = true;
  if (r.rolled_back === true) out["rolled_back"] = true;
  if (r.compensated === true) out["compensated"] = true;
  if (typeof r.compensation_error === "string") out["compensation_error"] = r.compensation_error;
  copyUnknownFields(r, out, ACTION_RESULT_FIELDS);
  return out;
}

export function serializeCostSummary(c: CostSummary): JsonObject {
  const out: JsonObject = {
    tool_calls: c.tool_calls,
    actions_executed: c.actions_executed,
    actions_rejected: c.actions_rejected,
    actions_skipped: c.actions_skipped,
    total_duration_ms: c.total_duration_ms,
    retries: c.retries,
  };
  copyUnknownFields(c, out, COST_SUMMARY_FIELDS);
  return out;
}

export function serializeProposalResult(r: ProposalResult): JsonObject {
  const out: JsonObject = {
    proposal_id: r.proposal_id,
    results: r.results.map(serializeActionResult),
    cost: serializeCostSummary(r.cost),
  };
  copyUnknownFields(r, out, PROPOSAL_RESULT_FIELDS);
  return out;
}
