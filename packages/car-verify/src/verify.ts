/**
 * `verify`: every static finding over a proposal in one pass, in the wire
 * shape of agent-ir-spec.md's "Verification result". Pure: no tools run and
 * no policies are evaluated (DECISIONS.md §6).
 */
import type { Action, DependencyGraph, VerificationIssue, VerificationResult } from "@car/ir";
import { CarError, dependencyEdges, effectiveWriteSet, isCarError, levelsOf } from "@car/ir";
import { compensationIssues } from "./compensation.ts";
import { findWriteConflicts } from "./conflicts.ts";
import { issue } from "./issue.ts";
import type { ProposalInput } from "./input.ts";
import { toParsed } from "./input.ts";
import { groupByKey } from "./pairs.ts";
import { topoPositions } from "./topo-orders.ts";
import { repeatedCallIssues } from "./repeated-calls.ts";
import type { StateInput } from "./state.ts";
import { stateMap, stateRecord } from "./state.ts";
import type { ToolSpec } from "./tools.ts";
import { toolRegistry } from "./tools.ts";
import { staticGate } from "./gate.ts";
import type { BlockReason } from "./walk.ts";
import { forwardWalk } from "./walk.ts";

export interface VerifyOptions {
  /** The state the walk starts from; `{}` when absent. */
  state?: StateInput;
  /** The tool registry: names, or ToolSchemas whose `parameters` are checked. Omit to skip tool checks. */
  tools?: readonly ToolSpec[];
  /** More actions than this is an error. */
  maxActions?: number;
  /**
   * `false` leaves out the static gate's findings (`gate.ts`), for a caller
   * about to run the proposal: the engine's admission reports them as the
   * rejections they become, so they are not shown twice.
   */
  gate?: boolean;
}

function quoteIds(actions: readonly Action[], indices: readonly number[]): string {
  const shown = indices.slice(0, 3).map((i) => `'${actions[i]!.id}'`);
  return indices.length > 3 ? `${shown.join(", ")} and ${indices.length - 3} more` : shown.join(", ");
}

function blockedIssues(
  actions: readonly Action[],
  blocked: readonly (BlockReason[] | undefined)[],
  writers: ReadonlyMap<string, readonly number[]>,
): VerificationIssue[] {
  const issues: VerificationIssue[] = [];
  blocked.forEach((reasons, i) => {
    if (reasons === undefined) return;
    const action = actions[i]!;
    for (const reason of reasons) {
      if (reason.kind === "precondition") {
        issues.push(issue(action, "error", `action '${action.id}': ${reason.message}`));
        continue;
      }
      const others = (writers.get(reason.key) ?? []).filter((w) => w !== i);
      const hint = others.length > 0 ? `; it is written by ${quoteIds(actions, others)}, not ordered before it` : "; no action writes it";
      issues.push(
        issue(action, "error", `action '${action.id}' depends on state key '${reason.key}', which is not available when it runs: the initial state and earlier levels do not provide it${hint}`),
      );
    }
  });
  return issues;
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

function finish(actions: readonly Action[], issues: VerificationIssue[], rest: Omit<VerificationResult, "valid" | "issues">): VerificationResult {
  const index = new Map<string, number>();
  actions.forEach((a, i) => {
    if (!index.has(a.id)) index.set(a.id, i);
  });
  const rank = (x: VerificationIssue) => (x.action_id === null ? -1 : (index.get(x.action_id) ?? -1));
  // Stable: within one action, findings keep the order the checks produced them.
  issues.sort((x, y) => rank(x) - rank(y));
  return { valid: !issues.some((x) => x.severity === "error"), issues, ...rest };
}

/**
 * Statically verifies a proposal. Accepts a parsed proposal, JSON text or raw
 * JSON data; input that does not parse is a thrown `invalid_proposal`. Every
 * other problem is an issue: `valid` is false exactly when one is an `error`.
 */
export function verify(input: ProposalInput, options: VerifyOptions = {}): VerificationResult {
  const parsed = toParsed(input);
  const actions = parsed.proposal.actions;
  const issues: VerificationIssue[] = [];
  if (options.maxActions !== undefined && actions.length > options.maxActions) {
    issues.push(issue(null, "error", `proposal has ${actions.length} actions, more than max_actions (${options.maxActions})`));
  }
  const initial = stateMap(options.state);

  let graph: DependencyGraph;
  try {
    graph = parsed.graph ?? dependencyEdges(actions);
  } catch (error) {
    if (!isCarError(error)) throw error;
    issues.push(...graphIssues(actions, error));
    return finish(actions, issues, { simulated_state: stateRecord(initial), execution_levels: [], conflicts: [] });
  }

  const walk = forwardWalk(actions, graph, initial);
  const pos = topoPositions(graph);
  const writeSets = actions.map(effectiveWriteSet);
  const writers = groupByKey(actions.length, (i) => writeSets[i]!, pos);
  issues.push(...blockedIssues(actions, walk.blocked, writers));

  const { pairs, partialKeys } = findWriteConflicts(graph, pos, writers);
  const conflicts: [string, string, string][] = [];
  for (const [a, b, key] of pairs) {
    const first = actions[a]!;
    const second = actions[b]!;
    conflicts.push([first.id, second.id, key]);
    issues.push(
      issue(second, "warning", `actions '${first.id}' and '${second.id}' both write '${key}' with no dependency path between them; the final value depends on scheduling`),
    );
  }
  for (const key of partialKeys) {
    issues.push(issue(null, "info", `key '${key}' has ${writers.get(key)!.length} writers; only neighbours in topological order were checked for write conflicts`));
  }

  if (options.gate !== false) {
    for (const f of staticGate(actions, options.tools === undefined ? undefined : toolRegistry(options.tools)).findings) {
      const action = actions[f.index]!;
      issues.push(issue(action, "error", `action '${action.id}': ${f.message}`));
    }
  }
  issues.push(...repeatedCallIssues(actions));
  issues.push(...compensationIssues(actions, graph.indexOf));

  return finish(actions, issues, {
    simulated_state: stateRecord(walk.declared),
    execution_levels: levelsOf(graph),
    conflicts,
  });
}
