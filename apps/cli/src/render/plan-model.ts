/**
 * What the plan drawings show, computed once for both the DOT and the HTML
 * form: each action placed by its execution level, its dependency edges (from
 * `dependencyEdges`, the one source of ordering), write conflicts, and the
 * verification findings attached to the action they concern.
 */
import { type Action, dependencyEdges, type Severity, type VerificationIssue, type VerificationResult } from "@car/ir";

export interface PlanNode {
  id: string;
  /** The tool for a `tool_call`, else the action type. */
  label: string;
  type: Action["type"];
  level: number;
  /** Position inside its level, top to bottom. */
  row: number;
  /** The worst severity among the action's findings, if any. */
  severity: Severity | undefined;
  issues: VerificationIssue[];
  /** The action itself, for the details a reviewer reads (parameters, preconditions, …). */
  action: Action;
  /** Simulation says it cannot run (a precondition or state dependency cannot hold, or a predecessor is blocked). */
  blocked: boolean;
}

export interface PlanModel {
  proposalId: string;
  valid: boolean;
  nodes: PlanNode[];
  /** `[from, to]`: `from` finishes before `to` starts. */
  edges: [string, string][];
  conflicts: [string, string, string][];
  /** Findings that name no action (e.g. the proposal is too large). */
  proposalIssues: VerificationIssue[];
  levels: string[][];
  /** Actions left out of a drawing capped by `maxNodes` (0 when every action is drawn). */
  omitted: number;
}

export interface PlanModelOptions {
  /**
   * Draw at most this many actions: the first ones in level order. A picture
   * of 100k boxes helps nobody and would not fit in a string.
   */
  maxNodes?: number;
  /** Ids of actions that cannot run (simulation's `skipped`), highlighted as blocked. */
  blocked?: ReadonlySet<string>;
}

const RANK: Record<Severity, number> = { error: 3, warning: 2, info: 1 };

export function worstSeverity(issues: readonly VerificationIssue[]): Severity | undefined {
  let worst: Severity | undefined;
  for (const i of issues) if (worst === undefined || RANK[i.severity] > RANK[worst]) worst = i.severity;
  return worst;
}

/** The first `max` ids in level order, keeping the level structure. */
function capLevels(levels: readonly string[][], max: number): string[][] {
  const out: string[][] = [];
  let room = max;
  for (const ids of levels) {
    if (room <= 0) break;
    out.push(ids.length <= room ? ids : ids.slice(0, room));
    room -= ids.length;
  }
  return out;
}

export function planModel(proposal: { id: string; actions: readonly Action[] }, result: VerificationResult, options: PlanModelOptions = {}): PlanModel {
  const graph = dependencyEdges(proposal.actions);
  const issuesOf = new Map<string, VerificationIssue[]>();
  const proposalIssues: VerificationIssue[] = [];
  for (const issue of result.issues) {
    if (issue.action_id !== null && graph.indexOf.has(issue.action_id)) {
      const list = issuesOf.get(issue.action_id) ?? [];
      list.push(issue);
      issuesOf.set(issue.action_id, list);
    } else {
      proposalIssues.push(issue);
    }
  }
  const levels = result.execution_levels;
  const placed = new Map<string, { level: number; row: number }>();
  levels.forEach((ids, level) => ids.forEach((id, row) => placed.set(id, { level, row })));
  // An action the levels do not mention still gets drawn, after the last level.
  let extraRow = 0;
  const nodes = proposal.actions.map((a): PlanNode => {
    const at = placed.get(a.id) ?? { level: levels.length, row: extraRow++ };
    const issues = issuesOf.get(a.id) ?? [];
    const blocked = options.blocked?.has(a.id) ?? false;
    return {
      id: a.id,
      label: a.type === "tool_call" ? (a.tool ?? "?") : a.type,
      type: a.type,
      ...at,
      severity: worstSeverity(issues),
      issues,
      action: a,
      blocked,
    };
  });
  const edges: [string, string][] = [];
  graph.preds.forEach((ps, to) => {
    for (const from of ps) edges.push([graph.ids[from]!, graph.ids[to]!]);
  });
  const allLevels = extraRow > 0 ? [...levels, nodes.filter((n) => n.level === levels.length).map((n) => n.id)] : levels;
  const model = { proposalId: proposal.id, valid: result.valid, nodes, edges, conflicts: result.conflicts, proposalIssues, levels: allLevels, omitted: 0 };
  if (options.maxNodes === undefined || nodes.length <= options.maxNodes) return model;
  const drawnLevels = capLevels(allLevels, options.maxNodes);
  const drawn = new Set(drawnLevels.flat());
  return {
    ...model,
    nodes: nodes.filter((n) => drawn.has(n.id)),
    edges: edges.filter(([from, to]) => drawn.has(from) && drawn.has(to)),
    conflicts: result.conflicts.filter(([a, b]) => drawn.has(a) && drawn.has(b)),
    levels: drawnLevels,
    omitted: nodes.length - drawn.size,
  };
}
