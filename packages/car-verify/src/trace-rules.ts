/**
 * Trace rules, checked before anything runs: does the proposal's DAG permit
 * an execution order that breaks a rule? The engine runs any two actions with
 * no dependency path between them in either order (or at once), so:
 *
 * - `only_after(X, Y)`: every X needs some Y among its ancestors. None at all
 *   in the proposal is an error in `proposal` scope (every order breaks it);
 *   Y present but not an ancestor is a warning (some order breaks it). In
 *   `session` scope an earlier proposal may satisfy it, so it is `info`.
 * - `never_after(X, Y)`: a Y that is an ancestor of X breaks it in every
 *   order (error); one unordered with X breaks it in some (warning). Two
 *   X actions under `never_after(X, X)` always break it.
 * - `max_calls(X, N)`: more than N X actions is an error (retries of one
 *   action are one call); compensations calling X that could push it past N,
 *   a warning.
 * - `requires_approval(X)`: depends on approvals recorded at run time — an
 *   `info` per X action, so the author knows to expect the question.
 *
 * Compensation actions never run forward and are left out.
 */
import type { Action, DependencyGraph, TraceRule, VerificationIssue } from "@car/ir";
import { traceRuleName } from "@car/ir";
import { issue } from "./issue.ts";
import { reachBatch } from "./reach.ts";

type Ordering = Extract<TraceRule, { after: string }>;

export function traceRuleIssues(
  actions: readonly Action[],
  graph: DependencyGraph,
  pos: Int32Array,
  compensations: ReadonlySet<number>,
  rules: readonly TraceRule[],
): VerificationIssue[] {
  const byTool = new Map<string, number[]>();
  actions.forEach((a, i) => {
    if (a.type !== "tool_call" || a.tool === undefined || compensations.has(i)) return;
    const list = byTool.get(a.tool);
    if (list) list.push(i);
    else byTool.set(a.tool, [i]);
  });
  const issues: VerificationIssue[] = [];
  for (const rule of rules) {
    const xs = byTool.get(rule.tool) ?? [];
    if (xs.length === 0) continue;
    const name = traceRuleName(rule);
    switch (rule.kind) {
      case "only_after":
        issues.push(...onlyAfter(actions, graph, pos, xs, byTool.get(rule.after) ?? [], rule, name));
        break;
      case "never_after":
        issues.push(...neverAfter(actions, graph, pos, xs, byTool.get(rule.after) ?? [], rule, name));
        break;
      case "max_calls": {
        if (xs.length > rule.max_calls) {
          issues.push(
            issue(actions[xs[rule.max_calls]!]!, "error", `${name}: the proposal calls '${rule.tool}' ${xs.length} times, more than ${rule.max_calls}`),
          );
          break;
        }
        const compensating = actions.filter(
          (a, i) => !compensations.has(i) && a.reversibility === "compensable" && compensationTool(a, actions, graph) === rule.tool,
        ).length;
        if (xs.length + compensating > rule.max_calls) {
          issues.push(
            issue(null, "warning", `${name}: with ${compensating} compensation(s) calling '${rule.tool}', a rollback could exceed ${rule.max_calls} calls`),
          );
        }
        break;
      }
      case "requires_approval":
        for (const x of xs) issues.push(issue(actions[x]!, "info", `${name}: '${actions[x]!.id}' runs only after an approval is recorded at run time`));
        break;
    }
  }
  return issues;
}

function onlyAfter(
  actions: readonly Action[],
  graph: DependencyGraph,
  pos: Int32Array,
  xs: number[],
  ys: number[],
  rule: Ordering,
  name: string,
): VerificationIssue[] {
  const session = rule.scope === "session";
  if (ys.length === 0) {
    return xs.map((x) =>
      session
        ? issue(
            actions[x]!,
            "info",
            `${name}: '${actions[x]!.id}' relies on '${rule.after}' having succeeded in an earlier proposal of the session; none is in this one`,
          )
        : issue(
            actions[x]!,
            "error",
            `${name}: '${actions[x]!.id}' calls '${rule.tool}', but no '${rule.after}' is in the proposal, so every order breaks the rule`,
          ),
    );
  }
  const from: number[] = [];
  const to: number[] = [];
  for (const x of xs) for (const y of ys) from.push(y), to.push(x);
  const answers = reachBatch(graph, pos, from, to);
  const ordered = new Set<number>();
  answers.forEach((yes, k) => {
    if (yes === 1) ordered.add(to[k]!);
  });
  return xs
    .filter((x) => !ordered.has(x))
    .map((x) =>
      issue(
        actions[x]!,
        session ? "info" : "warning",
        `${name}: the DAG permits '${actions[x]!.id}' to run before any '${rule.after}' succeeded: it is not ordered after ${ys
          .map((y) => `'${actions[y]!.id}'`)
          .slice(0, 3)
          .join(", ")}${session ? " (an earlier proposal of the session may satisfy it)" : ""}`,
      ),
    );
}

/** The tool an action's compensation calls, if any. */
function compensationTool(action: Action, actions: readonly Action[], graph: DependencyGraph): string | undefined {
  const comp = action.compensation;
  if (comp === undefined) return undefined;
  if (comp.type === "tool") return comp.tool;
  const target = graph.indexOf.get(comp.action_id);
  return target === undefined ? undefined : actions[target]!.tool;
}

function neverAfter(
  actions: readonly Action[],
  graph: DependencyGraph,
  pos: Int32Array,
  xs: number[],
  ys: number[],
  rule: Ordering,
  name: string,
): VerificationIssue[] {
  if (rule.tool === rule.after) {
    // Every call after the first is refused, whatever the order.
    return xs.length < 2 ? [] : [issue(null, "error", `${name}: the proposal calls '${rule.tool}' ${xs.length} times; every call after the first is refused`)];
  }
  const from: number[] = [];
  const to: number[] = [];
  for (const x of xs) {
    for (const y of ys) {
      from.push(y, x);
      to.push(x, y);
    }
  }
  const answers = reachBatch(graph, pos, from, to);
  const issues: VerificationIssue[] = [];
  for (let k = 0; k < from.length; k += 2) {
    const y = from[k]!;
    const x = to[k]!;
    const yBeforeX = answers[k] === 1;
    const xBeforeY = answers[k + 1] === 1;
    if (yBeforeX) {
      issues.push(issue(actions[x]!, "error", `${name}: '${actions[x]!.id}' always runs after '${actions[y]!.id}', so it is always refused`));
    } else if (!xBeforeY) {
      issues.push(
        issue(
          actions[x]!,
          "warning",
          `${name}: the DAG permits '${actions[y]!.id}' to run before '${actions[x]!.id}', which the rule then refuses; order '${actions[x]!.id}' first`,
        ),
      );
    }
  }
  return issues;
}
