/**
 * `verify`: every static finding over a proposal in one pass, in the wire
 * shape of agent-ir-spec.md's "Verification result". Pure: no tools run and
 * no policies are evaluated (DECISIONS.md §6).
 */
import type { Action, DependencyGraph, VerificationIssue, VerificationResult } from "@car/ir";
import type { TraceRule } from "@car/ir";
import { CarError, dependencyEdges, isCarError, refuseUnknownFields, unknownFields } from "@car/ir";
import { compensationActionIndices, levelsOf, preconditionFailureMessage, pushWrittenKeys } from "@car/ir/internal";
import { compensationIssues, compensationUseIssues } from "./compensation.ts";
import { rollbackReport } from "./rollback.ts";
import { checkTraceRules, traceRuleIssues } from "./trace-rules.ts";
import { findWriteConflicts, type WriteConflicts } from "./conflicts.ts";
import { GROUP_SAMPLE, sampleList } from "./grouped.ts";
import { issue } from "./issue.ts";
import type { VerifyInput } from "./input.ts";
import { toParsed } from "./input.ts";
import { groupByKey, groupSize, type KeyGroups, membersOf } from "./key-groups.ts";
import { topoPositions } from "./topo-orders.ts";
import { repeatedCallIssues } from "./repeated-calls.ts";
import type { StateInput } from "./state.ts";
import { stateMap, stateRecord } from "./state.ts";
import type { ToolSpec } from "./tools.ts";
import { toolRegistry } from "./tools.ts";
import { staticGate } from "./gate.ts";
import { EvidenceLog } from "./evidence.ts";
import type { BlockReason } from "./walk.ts";
import { declaredWalk } from "./walk.ts";

export interface VerifyOptions {
  /** The state the walk starts from; `{}` when absent. */
  state?: StateInput;
  /** The tool registry: names, or ToolSchemas whose `parameters` are checked. Omit to skip tool checks. */
  tools?: readonly ToolSpec[];
  /** More actions than this is an error. */
  maxActions?: number;
  /** Trace rules (the TraceGate's) to check the DAG's possible orders against. */
  traceRules?: readonly TraceRule[];
  /**
   * `false` leaves out the static gate's findings (`gate.ts`), for a caller
   * about to run the proposal: the engine's admission reports them as the
   * rejections they become, so they are not shown twice.
   */
  gate?: boolean;
  /**
   * Fields the spec does not name are warnings with a did-you-mean (they
   * round-trip); `true` makes them a thrown `invalid_proposal` instead
   * (DECISIONS §25).
   */
  strict?: boolean;
}

/** Up to three writers of `key` other than action `i`, quoted, and how many there are. */
function otherWriters(actions: readonly Action[], key: string, writers: KeyGroups, skip: number): string {
  const k = writers.table.idOf(key);
  const all = k === undefined ? [] : membersOf(writers, k);
  const shown: string[] = [];
  let total = 0;
  for (const w of all) {
    if (w === skip) continue;
    total++;
    if (shown.length < 3) shown.push(`'${actions[w]!.id}'`);
  }
  return total === 0 ? "" : sampleList(shown, total, 3);
}

/** The blocked actions of one kind on one key, in declaration order, with their reasons. */
interface BlockedGroup {
  readonly actions: number[];
  readonly reasons: BlockReason[];
}

/** Blocked actions grouped by kind and key, groups in first-seen order: one map per kind, no string built per action. */
function groupBlocked(blocked: readonly (readonly BlockReason[] | undefined)[]): BlockedGroup[] {
  const groups: BlockedGroup[] = [];
  const byKind = { precondition: new Map<string, BlockedGroup>(), state_dependency: new Map<string, BlockedGroup>() };
  for (let i = 0; i < blocked.length; i++) {
    for (const reason of blocked[i] ?? []) {
      const byKey = byKind[reason.kind];
      let group = byKey.get(reason.key);
      if (group === undefined) {
        group = { actions: [], reasons: [] };
        byKey.set(reason.key, group);
        groups.push(group);
      }
      group.actions.push(i);
      group.reasons.push(reason);
    }
  }
  return groups;
}

/** A failed precondition's message; built only for the failures reported, not for every blocked action. */
function preconditionMessage(reason: BlockReason): string {
  return reason.kind === "precondition" ? preconditionFailureMessage(reason.precondition, reason.miss) : "";
}

/**
 * Blocked actions, one issue each while few block on one key, else one issue
 * per key and kind with the count and a sample of the actions.
 */
function blockedIssues(actions: readonly Action[], blocked: readonly (readonly BlockReason[] | undefined)[], writers: KeyGroups): VerificationIssue[] {
  const issues: VerificationIssue[] = [];
  for (const group of groupBlocked(blocked)) {
    const first = group.actions[0]!;
    const reason = group.reasons[0]!;
    const action = actions[first]!;
    const key = reason.key;
    const size = group.actions.length;
    if (size > GROUP_SAMPLE) {
      const ids = sampleList(
        group.actions.slice(0, GROUP_SAMPLE).map((i) => `'${actions[i]!.id}'`),
        size,
      );
      if (reason.kind === "precondition") {
        issues.push(
          issue(
            action,
            "error",
            `${size} actions have a precondition on '${key}' that cannot hold (${ids}); the first: action '${action.id}': ${preconditionMessage(reason)} — the precondition will fail`,
          ),
        );
      } else {
        const others = otherWriters(actions, key, writers, -1);
        const hint = others === "" ? "no action writes it" : `it is written by ${others}, not ordered before them`;
        issues.push(
          issue(
            action,
            "error",
            `${size} actions depend on state key '${key}', which is not available when they run (not available at this point) (${ids}): the initial state and earlier levels do not provide it; ${hint}`,
          ),
        );
      }
      continue;
    }
    group.actions.forEach((i, m) => {
      const a = actions[i]!;
      const r = group.reasons[m]!;
      if (r.kind === "precondition") {
        issues.push(issue(a, "error", `action '${a.id}': ${preconditionMessage(r)} — the precondition will fail`));
        return;
      }
      const others = otherWriters(actions, key, writers, i);
      const hint = others !== "" ? `; it is written by ${others}, not ordered before it` : "; no action writes it";
      issues.push(
        issue(
          a,
          "error",
          `action '${a.id}' depends on state key '${key}', which is not available when it runs (not available at this point): the initial state and earlier levels do not provide it${hint}`,
        ),
      );
    });
  }
  return issues;
}

/** Write conflicts, one issue per pair while a key has few, else one issue per key with a sample of pairs. */
function conflictIssues(actions: readonly Action[], found: WriteConflicts, keys: readonly string[]): VerificationIssue[] {
  // Pairs by key (a stable counting sort), keys in first-seen order.
  const count = new Int32Array(keys.length + 1);
  const firstSeen: number[] = [];
  for (let f = 0; f < found.key.length; f++) if (count[found.key[f]! + 1]!++ === 0) firstSeen.push(found.key[f]!);
  for (let k = 0; k < keys.length; k++) count[k + 1]! += count[k]!;
  const start = count.slice();
  const byKey = new Int32Array(found.key.length);
  for (let f = 0; f < found.key.length; f++) byKey[count[found.key[f]!]!++] = f;

  const issues: VerificationIssue[] = [];
  const names = (f: number) => [actions[found.earlier[f]!]!, actions[found.later[f]!]!] as const;
  for (const k of firstSeen) {
    const key = keys[k]!;
    const group = byKey.subarray(start[k]!, start[k + 1]!);
    if (group.length <= GROUP_SAMPLE) {
      for (const f of group) {
        const [first, second] = names(f);
        issues.push(
          issue(
            second,
            "warning",
            `actions '${first.id}' and '${second.id}' both write '${key}' with no dependency path between them; the final value depends on scheduling`,
          ),
        );
      }
      continue;
    }
    const sample = sampleList(
      Array.from(group.subarray(0, GROUP_SAMPLE), (f) => `'${names(f)[0].id}' and '${names(f)[1].id}'`),
      group.length,
    );
    issues.push(
      issue(
        names(group[0]!)[1],
        "warning",
        `${group.length} pairs of actions write '${key}' with no dependency path between them (${sample}); the final value depends on scheduling; every pair is listed in conflicts`,
      ),
    );
  }
  return issues;
}

/** `out.push(...more)` without spreading: a spread of 100k+ findings overflows the call stack. */
function append(out: VerificationIssue[], more: readonly VerificationIssue[]): void {
  for (const x of more) out.push(x);
}

/** A graph that cannot be built (unknown ids, cycles) is reported, not thrown: it is the proposal's defect. */
function graphIssues(actions: readonly Action[], error: CarError): VerificationIssue[] {
  const problems = error.details.problems ?? [{ pointer: "/actions", message: error.message }];
  return problems.map((p) => {
    const index = /^\/actions\/(\d+)/.exec(p.pointer)?.[1];
    const action = index === undefined ? null : (actions[Number(index)] ?? null);
    return issue(action, "error", `dependency graph: ${p.message}`);
  });
}

function firstIndex(actions: readonly Action[]): Map<string, number> {
  const index = new Map<string, number>();
  actions.forEach((a, i) => {
    if (!index.has(a.id)) index.set(a.id, i);
  });
  return index;
}

function finish(
  actions: readonly Action[],
  issues: VerificationIssue[],
  rest: Omit<VerificationResult, "valid" | "issues" | "evidence">,
  evidence: EvidenceLog,
  index: ReadonlyMap<string, number> = firstIndex(actions),
): VerificationResult {
  const rank = (x: VerificationIssue) => (x.action_id === null ? -1 : (index.get(x.action_id) ?? -1));
  // Stable: within one action, findings keep the order the checks produced them.
  issues.sort((x, y) => rank(x) - rank(y));
  return { valid: !issues.some((x) => x.severity === "error"), issues, ...rest, evidence: evidence.evidence() };
}

/** The checks that need the dependency graph, reported as not run when it cannot be built. */
const GRAPH_CHECKS = ["state_walk", "write_conflicts", "repeated_calls", "compensation"] as const;

/** How many untested tool calls are named one by one before the rest are counted. */
const UNTESTED_NAMED = 10;

/**
 * The static gate's findings, split by what they check: state keys
 * (`static_gate`) and tool calls against the registered tools
 * (`param_schema`, which does not run without a registry). A tool call whose
 * parameters met no schema is an untested region.
 */
function gateChecks(actions: readonly Action[], options: VerifyOptions, issues: VerificationIssue[], evidence: EvidenceLog): void {
  if (options.gate === false) {
    evidence.record("static_gate", false, 0, null);
    evidence.record("param_schema", false, 0, null);
    return;
  }
  const tools = options.tools === undefined ? undefined : toolRegistry(options.tools);
  const report = staticGate(actions, tools);
  let keyFindings = 0;
  let toolFindings = 0;
  for (const f of report.findings) {
    const action = actions[f.index]!;
    issues.push(issue(action, "error", `action '${action.id}': ${f.message}`));
    // A tool_call has no state keys: its findings are about its tool and parameters.
    if (action.type === "tool_call") toolFindings++;
    else keyFindings++;
  }
  evidence.record("static_gate", true, keyFindings);
  let calls = 0;
  let checked = 0;
  // Only the first few are named: a 1M-action plan gets a count, not a million strings.
  const unchecked: string[] = [];
  for (let i = 0; i < actions.length; i++) {
    const action = actions[i]!;
    if (action.type !== "tool_call") continue;
    calls++;
    const schema = tools === undefined || action.tool === undefined ? undefined : tools.get(action.tool)?.validateParams;
    if (schema !== undefined && report.hasRefs[i] === 0) checked++;
    else if (unchecked.length < UNTESTED_NAMED) unchecked.push(`'${action.id}'`);
  }
  const uncheckedCount = calls - checked;
  if (calls === 0) evidence.record("param_schema", tools !== undefined, toolFindings, null);
  else evidence.record("param_schema", tools !== undefined, toolFindings, checked / calls);
  if (uncheckedCount > 0) {
    evidence.untested(
      `parameters of tool call(s) ${sampleList(unchecked, uncheckedCount, UNTESTED_NAMED)}: ${tools === undefined ? "no tools are registered" : "no registered schema, or $<id>.output references resolved only at dispatch"}`,
    );
  }
}

/**
 * Statically verifies a proposal. Accepts a parsed proposal, JSON text or raw
 * JSON data; input that does not parse is a thrown `invalid_proposal`. Every
 * other problem is an issue: `valid` is false exactly when one is an `error`.
 */
export function verify(input: VerifyInput, options: VerifyOptions = {}): VerificationResult {
  if (typeof options !== "object" || options === null) throw new CarError("invalid_params", "invalid verify options: must be an object");
  if (options.maxActions !== undefined && !(Number.isInteger(options.maxActions) && options.maxActions >= 0)) {
    throw new CarError("invalid_params", "invalid verify options: maxActions must be a non-negative integer");
  }
  if (options.strict !== undefined && typeof options.strict !== "boolean")
    throw new CarError("invalid_params", "invalid verify options: strict must be a boolean");
  checkTraceRules(options.traceRules);
  const parsed = toParsed(input);
  if (options.strict === true) refuseUnknownFields(parsed.proposal);
  const actions = parsed.proposal.actions;
  const issues: VerificationIssue[] = [];
  const evidence = new EvidenceLog();
  /** Runs one check: its findings are the issues it appended. */
  const check = (name: Parameters<EvidenceLog["record"]>[0], run: () => void, coverage?: number): void => {
    const before = issues.length;
    run();
    evidence.record(name, true, issues.length - before, coverage ?? 1);
  };
  const before = issues.length;
  for (const f of unknownFields(parsed.proposal)) {
    issues.push({
      action_id: f.action_id ?? null,
      severity: "warning",
      message: `${f.pointer}: ${f.message} (kept as is, not acted on)`,
      tier: "decision_procedure",
    });
  }
  evidence.record("proposal_fields", true, issues.length - before);
  if (options.maxActions === undefined) evidence.record("action_limit", false, 0, null);
  else
    check("action_limit", () => {
      if (actions.length > options.maxActions!) {
        issues.push(issue(null, "error", `proposal has ${actions.length} actions, more than max_actions (${options.maxActions})`));
      }
    });
  const initial = stateMap(options.state);

  let graph: DependencyGraph;
  try {
    graph = parsed.graph ?? dependencyEdges(actions);
  } catch (error) {
    if (!isCarError(error)) throw error;
    check("dependency_graph", () => append(issues, graphIssues(actions, error)));
    for (const name of GRAPH_CHECKS) evidence.record(name, false, 0);
    evidence.untested("every action: the dependency graph could not be built, so no state, conflict or order check ran");
    return finish(actions, issues, { simulated_state: stateRecord(initial), execution_levels: [], conflicts: [] }, evidence);
  }
  evidence.record("dependency_graph", true, 0);

  const walk = declaredWalk(actions, graph, initial);
  const pos = topoPositions(graph);
  const writers = groupByKey(actions.length, (i, out) => pushWrittenKeys(actions[i]!, out), graph.flat.order);
  check("state_walk", () => append(issues, blockedIssues(actions, walk.blocked, writers)));

  const found = findWriteConflicts(graph, pos, writers);
  const keys = writers.table.keys;
  const conflicts: [string, string, string][] = new Array(found.key.length);
  for (let f = 0; f < conflicts.length; f++) conflicts[f] = [actions[found.earlier[f]!]!.id, actions[found.later[f]!]!.id, keys[found.key[f]!]!];
  const partial = found.partialKeys.length;
  check(
    "write_conflicts",
    () => {
      append(issues, conflictIssues(actions, found, keys));
      for (const k of found.partialKeys) {
        issues.push(
          issue(null, "info", `key '${keys[k]}' has ${groupSize(writers, k)} writers; only neighbours in topological order were checked for write conflicts`),
        );
      }
    },
    keys.length === 0 ? 1 : (keys.length - partial) / keys.length,
  );
  if (partial > 0) evidence.untested(`${partial} written key(s) with many writers: only neighbours in topological order were checked for conflicts`);

  gateChecks(actions, options, issues, evidence);
  check("repeated_calls", () => append(issues, repeatedCallIssues(actions)));
  const compensations = compensationActionIndices(actions);
  check("compensation", () => {
    append(issues, compensationIssues(actions, graph.indexOf));
    append(issues, compensationUseIssues(actions, graph.flat, compensations));
  });
  if (options.traceRules !== undefined && options.traceRules.length > 0) {
    check("trace_rules", () => append(issues, traceRuleIssues(actions, graph, pos, compensations, options.traceRules!)));
  } else evidence.record("trace_rules", false, 0, null);

  return finish(
    actions,
    issues,
    {
      simulated_state: stateRecord(walk.declared),
      execution_levels: levelsOf(graph),
      conflicts,
      rollback_contract: rollbackReport(actions, graph.indexOf, compensations),
    },
    evidence,
    graph.indexOf,
  );
}
