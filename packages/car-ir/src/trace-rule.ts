/**
 * Temporal rules over a run's execution trace (`[[trace_rule]]` in a policy
 * file, or registered). Plain data shared by the two places that read it:
 * `@car/policy`'s TraceGate enforces a rule at dispatch, and `@car/verify`
 * reports a proposal whose dependency graph permits an order that breaks one.
 * The grammar and semantics are documented in `@car/policy`'s docs/trace-rules.md.
 */

/** How far back a rule looks: this proposal's dispatches, or the whole session's. */
export type TraceScope = "proposal" | "session";

export type TraceRule =
  /** `tool` is admitted only once an `after` call has succeeded in the scope. */
  | { kind: "only_after"; tool: string; after: string; scope: TraceScope; name?: string }
  /** `tool` is refused once an `after` call has been dispatched in the scope (succeeded or not). */
  | { kind: "never_after"; tool: string; after: string; scope: TraceScope; name?: string }
  /** At most `max_calls` admitted calls of `tool` in the scope. */
  | { kind: "max_calls"; tool: string; max_calls: number; scope: TraceScope; name?: string }
  /** `tool` is admitted only after an approval of the same operation (or of the tool) in the scope. */
  | { kind: "requires_approval"; tool: string; scope: TraceScope; name?: string };

export type TraceRuleKind = TraceRule["kind"];

export const TRACE_RULE_KINDS: readonly TraceRuleKind[] = ["only_after", "never_after", "max_calls", "requires_approval"];

/**
 * The rule's stable name: its own `name`, else derived from what it says —
 * `trace_rule:only_after(deploy,run_tests)`, `trace_rule:max_calls(send_email,3)@session`.
 */
export function traceRuleName(rule: TraceRule): string {
  if (rule.name !== undefined) return rule.name;
  const args =
    rule.kind === "only_after" || rule.kind === "never_after"
      ? `${rule.tool},${rule.after}`
      : rule.kind === "max_calls"
        ? `${rule.tool},${rule.max_calls}`
        : rule.tool;
  return `trace_rule:${rule.kind}(${args})${rule.scope === "session" ? "@session" : ""}`;
}
