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
 *
 * Each rule gives at most one issue, naming the first action that breaks it
 * and how many more do, and costs time linear in the proposal: ancestry is
 * propagated once along the topological order instead of asked per pair.
 * Only `never_after`'s "some order breaks it" can need pairs, and those are
 * asked at most `TRACE_PAIR_BUDGET` at a time, stopping at the first witness.
 */
import type { Action, DependencyGraph, Severity, TraceRule, VerificationIssue } from "@car/ir";
import { CarError, TRACE_RULE_KINDS, traceRuleName } from "@car/ir";
import { issue } from "./issue.ts";
import { Reachability } from "./reach.ts";

type Ordering = Extract<TraceRule, { after: string }>;

/** Pairs `never_after` asks about when ancestry alone does not settle it; past this, the rule is reported as unproven. */
export const TRACE_PAIR_BUDGET = 65_536;
/** Pairs per reachability batch, so a witness found early stops the asking. */
const PAIR_BATCH = 1_024;

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
  let reach: Reachability | undefined;
  for (const rule of rules) {
    const xs = byTool.get(rule.tool) ?? [];
    if (xs.length === 0) continue;
    const name = traceRuleName(rule);
    let found: VerificationIssue | undefined;
    switch (rule.kind) {
      case "only_after":
        found = onlyAfter(actions, graph, xs, byTool.get(rule.after) ?? [], rule, name);
        break;
      case "never_after":
        found = neverAfter(actions, graph, xs, byTool.get(rule.after) ?? [], rule, name, () => (reach ??= new Reachability(graph, pos)));
        break;
      case "max_calls": {
        if (xs.length > rule.max_calls) {
          found = issue(actions[xs[rule.max_calls]!]!, "error", `${name}: the proposal calls '${rule.tool}' ${xs.length} times, more than ${rule.max_calls}`);
          break;
        }
        const compensating = actions.filter(
          (a, i) => !compensations.has(i) && a.reversibility === "compensable" && compensationTool(a, actions, graph) === rule.tool,
        ).length;
        if (xs.length + compensating > rule.max_calls) {
          found = issue(
            null,
            "warning",
            `${name}: with ${compensating} compensation(s) calling '${rule.tool}', a rollback could exceed ${rule.max_calls} calls`,
          );
        }
        break;
      }
      case "requires_approval":
        found = issue(
          actions[xs[0]!]!,
          "info",
          `${name}: '${actions[xs[0]!]!.id}' runs only after an approval is recorded at run time${more(xs.length - 1, rule.tool)}`,
        );
        break;
    }
    if (found !== undefined) issues.push(found);
  }
  return issues;
}

/**
 * `verify`'s `traceRules` option, checked once at the entry: an array of
 * rules, each with a known kind, string tools, a scope and (for
 * `max_calls`) a non-negative integer. Anything else is `invalid_params`
 * naming the rule, never a `TypeError` or a rule silently ignored.
 */
export function checkTraceRules(rules: unknown): asserts rules is readonly TraceRule[] | undefined {
  if (rules === undefined) return;
  const bad = (why: string) => new CarError("invalid_params", `invalid verify options: traceRules ${why}`);
  if (!Array.isArray(rules)) throw bad("must be an array of trace rules");
  rules.forEach((rule: unknown, i) => {
    const r = rule as Record<string, unknown> | null;
    if (typeof r !== "object" || r === null || Array.isArray(r)) throw bad(`[${i}] must be an object`);
    if (!(TRACE_RULE_KINDS as readonly unknown[]).includes(r["kind"])) throw bad(`[${i}].kind must be one of ${TRACE_RULE_KINDS.join(", ")}`);
    if (typeof r["tool"] !== "string") throw bad(`[${i}].tool must be a string`);
    if (r["scope"] !== "proposal" && r["scope"] !== "session") throw bad(`[${i}].scope must be proposal or session`);
    if ((r["kind"] === "only_after" || r["kind"] === "never_after") && typeof r["after"] !== "string") throw bad(`[${i}].after must be a string`);
    if (r["kind"] === "max_calls" && !(Number.isInteger(r["max_calls"]) && (r["max_calls"] as number) >= 0)) {
      throw bad(`[${i}].max_calls must be a non-negative integer`);
    }
    if (r["name"] !== undefined && typeof r["name"] !== "string") throw bad(`[${i}].name must be a string`);
  });
}

/** ` (and 3 more 'deploy' actions)`, or nothing. */
function more(count: number, tool: string): string {
  return count <= 0 ? "" : ` (and ${count} more '${tool}' action${count === 1 ? "" : "s"})`;
}

/**
 * For each action, one of `sources` among its proper ancestors (`-1` when
 * none), found in one pass along the topological order.
 */
function ancestorWitness(graph: DependencyGraph, sources: readonly number[]): Int32Array {
  const { order, predStart, preds } = graph.flat;
  const isSource = new Uint8Array(order.length);
  for (const s of sources) isSource[s] = 1;
  const witness = new Int32Array(order.length).fill(-1);
  for (let k = 0; k < order.length; k++) {
    const n = order[k]!;
    for (let e = predStart[n]!; e < predStart[n + 1]! && witness[n] === -1; e++) {
      const p = preds[e]!;
      witness[n] = isSource[p] === 1 ? p : witness[p]!;
    }
  }
  return witness;
}

function onlyAfter(
  actions: readonly Action[],
  graph: DependencyGraph,
  xs: number[],
  ys: number[],
  rule: Ordering,
  name: string,
): VerificationIssue | undefined {
  const session = rule.scope === "session";
  const first = actions[xs[0]!]!;
  if (ys.length === 0) {
    return session
      ? issue(
          first,
          "info",
          `${name}: '${first.id}' relies on '${rule.after}' having succeeded in an earlier proposal of the session; none is in this one${more(xs.length - 1, rule.tool)}`,
        )
      : issue(
          first,
          "error",
          `${name}: '${first.id}' calls '${rule.tool}', but no '${rule.after}' is in the proposal, so every order breaks the rule${more(xs.length - 1, rule.tool)}`,
        );
  }
  const witness = ancestorWitness(graph, ys);
  const unordered = xs.filter((x) => witness[x] === -1);
  if (unordered.length === 0) return undefined;
  const x = actions[unordered[0]!]!;
  const sample = ys
    .slice(0, 3)
    .map((y) => `'${actions[y]!.id}'`)
    .join(", ");
  return issue(
    x,
    session ? "info" : "warning",
    `${name}: the DAG permits '${x.id}' to run before any '${rule.after}' succeeded: it is not ordered after ${sample}${more(unordered.length - 1, rule.tool)}${session ? " (an earlier proposal of the session may satisfy it)" : ""}`,
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
  xs: number[],
  ys: number[],
  rule: Ordering,
  name: string,
  reach: () => Reachability,
): VerificationIssue | undefined {
  if (rule.tool === rule.after) {
    // Every call after the first is refused, whatever the order.
    return xs.length < 2
      ? undefined
      : issue(null, "error", `${name}: the proposal calls '${rule.tool}' ${xs.length} times; every call after the first is refused`);
  }
  if (ys.length === 0) return undefined;
  // A Y among X's ancestors: refused in every order.
  const afterY = ancestorWitness(graph, ys);
  const refused = xs.filter((x) => afterY[x] !== -1);
  if (refused.length > 0) {
    const x = actions[refused[0]!]!;
    return issue(
      x,
      "error",
      `${name}: '${x.id}' always runs after '${actions[afterY[refused[0]!]!]!.id}', so it is always refused${more(refused.length - 1, rule.tool)}`,
    );
  }
  // No Y precedes any X, so a pair is unordered unless the X precedes the Y. A Y with no X before it is unordered with every X.
  const afterX = ancestorWitness(graph, xs);
  const free = ys.find((y) => afterX[y] === -1);
  const pair = free !== undefined ? ([xs[0]!, free] as const) : unorderedPair(reach(), xs, ys);
  if (pair === "unproven") {
    return issue(
      null,
      "warning",
      `${name}: the ${xs.length} '${rule.tool}' and ${ys.length} '${rule.after}' actions form more than ${TRACE_PAIR_BUDGET} pairs; the first ${TRACE_PAIR_BUDGET} are ordered, the rest were not checked, so some order may break the rule`,
    );
  }
  if (pair === undefined) return undefined;
  return unorderedIssue(actions, pair[0], pair[1], name, "warning");
}

function unorderedIssue(actions: readonly Action[], x: number, y: number, name: string, severity: Severity): VerificationIssue {
  const xa = actions[x]!;
  const ya = actions[y]!;
  return issue(xa, severity, `${name}: the DAG permits '${ya.id}' to run before '${xa.id}', which the rule then refuses; order '${xa.id}' first`);
}

/** Some `(x, y)` with no path from `x` to `y`, asking at most `TRACE_PAIR_BUDGET` pairs; `"unproven"` when the budget ran out first. */
function unorderedPair(reach: Reachability, xs: readonly number[], ys: readonly number[]): readonly [number, number] | undefined | "unproven" {
  const from = new Int32Array(PAIR_BATCH);
  const to = new Int32Array(PAIR_BATCH);
  let asked = 0;
  let n = 0;
  const flush = (): readonly [number, number] | undefined => {
    const answers = reach.batch(from.subarray(0, n), to.subarray(0, n));
    const k = answers.indexOf(0);
    const pair = k === -1 ? undefined : ([from[k]!, to[k]!] as const);
    n = 0;
    return pair;
  };
  for (const x of xs) {
    for (const y of ys) {
      if (asked === TRACE_PAIR_BUDGET) return flush() ?? "unproven";
      from[n] = x;
      to[n] = y;
      n++;
      asked++;
      if (n === PAIR_BATCH) {
        const pair = flush();
        if (pair !== undefined) return pair;
      }
    }
  }
  return n > 0 ? flush() : undefined;
}
