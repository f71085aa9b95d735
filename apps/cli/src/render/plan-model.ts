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
}

const RANK: Record<Severity, number> = { error: 3, warning: 2, info: 1 };

export function worstSeverity(issues: readonly VerificationIssue[]): Severity | undefined {
  let worst: Severity | undefined;
  for (const i of issues) if (worst === undefined || RANK[i.severity] > RANK[worst]) worst = i.severity;
  return worst;
}

export function planModel(proposal: { id: string; actions: readonly Action[] }, result: VerificationResult): PlanModel {
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
    return { id: a.id, label: a.type === "tool_call" ? (a.tool ?? "?") : a.type, type: a.type, ...at, severity: worstSeverity(issues), issues };
  });
  const edges: [string, string][] = [];
  graph.preds.forEach((ps, to) => {
    for (const from of ps) edges.push([graph.ids[from]!, graph.ids[to]!]);
  });
  const drawnLevels = extraRow > 0 ? [...levels, nodes.filter((n) => n.level === levels.length).map((n) => n.id)] : levels;
  return { proposalId: proposal.id, valid: result.valid, nodes, edges, conflicts: result.conflicts, proposalIssues, levels: drawnLevels };
}
