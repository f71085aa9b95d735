/**
 * The TraceGate: enforces trace rules at dispatch. It folds the run's trace —
 * what was dispatched, what succeeded, what was approved — into per-scope
 * facts (one set for the session, one per run) and answers whether the
 * next call may go. Proposal-scoped facts key on the run id the runtime
 * mints for each execution (DECISIONS §20), never on the proposer's
 * `proposal.id`, so two proposals sharing an id cannot share or reset them.
 * The session's facts may be handed in (`new TraceGate(facts)`): a host
 * shares one `TraceFacts` between every runtime acting for one agent
 * (DECISIONS §21), so reconnecting does not start the session afresh. Unlike a `PolicyEngine` rule it is stateful by design:
 * the same call can be allowed or refused depending on what ran before.
 *
 * `admit` checks and, when the call passes, records it as dispatched in one
 * synchronous step, so two concurrent actions cannot both take the last slot
 * of a `max_calls` rule. `evaluateTrace` is the same judgement as a pure
 * function of a rule list and an event sequence.
 */
import { type PolicyViolation, type TraceRule, traceRuleName } from "@car/ir";

/** One step of the trace, as the runtime reports it. */
export type TraceRecord =
  /** A call admitted by every gate and handed to its tool (a retry is not a new call). */
  | { type: "dispatched"; tool: string; run_id: string }
  /** A call that ended in success (a detached call: when its final result is a success, not when it starts). */
  | { type: "succeeded"; tool: string; run_id: string }
  /** An approval: of one operation (`fingerprint`, see `operationFingerprint`), or of the tool as a whole. */
  | { type: "approved"; tool: string; run_id: string; fingerprint?: string };

/** The call being judged. `fingerprint` lets an approval of exactly this operation count. */
export interface TraceCall {
  tool: string;
  action_id: string;
  /** The run the call belongs to (the runtime's run id, not the proposal's `id`). */
  run_id: string;
  fingerprint?: string;
}

/** What one scope has seen so far. A host may extend `observe` to keep the session's facts somewhere durable. */
export class TraceFacts {
  readonly succeeded = new Set<string>();
  readonly dispatched = new Map<string, number>();
  readonly approvedTools = new Set<string>();
  readonly approvedOps = new Set<string>();

  observe(record: TraceRecord): void {
    switch (record.type) {
      case "dispatched":
        this.dispatched.set(record.tool, (this.dispatched.get(record.tool) ?? 0) + 1);
        break;
      case "succeeded":
        this.succeeded.add(record.tool);
        break;
      case "approved":
        if (record.fingerprint === undefined) this.approvedTools.add(record.tool);
        else this.approvedOps.add(record.fingerprint);
        break;
    }
  }
}

const NOTHING_YET = new TraceFacts();

interface Registered {
  rule: TraceRule;
  name: string;
}

export class TraceGate {
  readonly #rules: Registered[] = [];
  #byTool = new Map<string, Registered[]>();
  readonly #session: TraceFacts;
  readonly #runs = new Map<string, TraceFacts>();

  /** `session`: the facts of the agent this gate's runtime acts for, shared with its other runtimes; fresh ones by default. */
  constructor(session: TraceFacts = new TraceFacts()) {
    this.#session = session;
  }

  /** Adds a rule; returns its stable name. */
  register(rule: TraceRule): string {
    const entry = { rule, name: traceRuleName(rule) };
    this.#rules.push(entry);
    const list = this.#byTool.get(rule.tool);
    if (list) list.push(entry);
    else this.#byTool.set(rule.tool, [entry]);
    return entry.name;
  }

  /** Removes every rule with this name; returns how many were removed. */
  unregister(name: string): number {
    const before = this.#rules.length;
    for (let i = this.#rules.length - 1; i >= 0; i--) if (this.#rules[i]!.name === name) this.#rules.splice(i, 1);
    const removed = before - this.#rules.length;
    if (removed > 0) {
      this.#byTool = new Map();
      for (const entry of this.#rules) {
        const list = this.#byTool.get(entry.rule.tool);
        if (list) list.push(entry);
        else this.#byTool.set(entry.rule.tool, [entry]);
      }
    }
    return removed;
  }

  /** Distinct rule names, in registration order. */
  names(): string[] {
    return [...new Set(this.#rules.map((r) => r.name))];
  }

  /** The registered rules, in registration order (what `verify` checks statically). */
  rules(): TraceRule[] {
    return this.#rules.map((r) => r.rule);
  }

  get size(): number {
    return this.#rules.length;
  }

  /** Whether any rule gates calls of `tool` (only then does a call need judging, and its fingerprint computing). */
  governs(tool: string): boolean {
    return this.#byTool.has(tool);
  }

  /** Records one step of the trace. Every step is kept (per tool), so a rule registered later sees the session's past. */
  observe(record: TraceRecord): void {
    this.#session.observe(record);
    let facts = this.#runs.get(record.run_id);
    if (facts === undefined) {
      // A success reported after its run ended (a detached call) is the session's alone: the run's facts are gone.
      if (record.type === "succeeded") return;
      this.#runs.set(record.run_id, (facts = new TraceFacts()));
    }
    facts.observe(record);
  }

  /** Every rule `call` breaks given the trace so far. Changes nothing. */
  check(call: TraceCall): PolicyViolation[] {
    const rules = this.#byTool.get(call.tool);
    if (rules === undefined) return [];
    const out: PolicyViolation[] = [];
    for (const { rule, name } of rules) {
      const facts = rule.scope === "session" ? this.#session : (this.#runs.get(call.run_id) ?? NOTHING_YET);
      const reason = breach(rule, facts, call);
      if (reason !== undefined) out.push({ policy_name: name, action_id: call.action_id, reason });
    }
    return out;
  }

  /** `check`, and when nothing is broken, records the call as dispatched — atomically. */
  admit(call: TraceCall): PolicyViolation[] {
    const violations = this.check(call);
    if (violations.length === 0) this.observe({ type: "dispatched", tool: call.tool, run_id: call.run_id });
    return violations;
  }

  /** Forgets a finished run's own facts (its steps stay in the session's). */
  endRun(run_id: string): void {
    this.#runs.delete(run_id);
  }
}

/** The pure form: would `call` be refused after exactly `trace`, under `rules`? */
export function evaluateTrace(rules: readonly TraceRule[], trace: readonly TraceRecord[], call: TraceCall): PolicyViolation[] {
  const gate = new TraceGate();
  for (const rule of rules) gate.register(rule);
  for (const record of trace) gate.observe(record);
  return gate.check(call);
}

function breach(rule: TraceRule, facts: TraceFacts, call: TraceCall): string | undefined {
  const where = rule.scope === "session" ? "this session" : "this proposal";
  switch (rule.kind) {
    case "only_after":
      return facts.succeeded.has(rule.after) ? undefined : `'${rule.tool}' may run only after '${rule.after}' succeeded in ${where}, and it has not`;
    case "never_after":
      return (facts.dispatched.get(rule.after) ?? 0) === 0 ? undefined : `'${rule.tool}' may not run after '${rule.after}' ran in ${where}`;
    case "max_calls": {
      const calls = facts.dispatched.get(rule.tool) ?? 0;
      return calls < rule.max_calls ? undefined : `'${rule.tool}' may run at most ${rule.max_calls} time(s) in ${where}; ${calls} already ran`;
    }
    case "requires_approval": {
      const approved = facts.approvedTools.has(rule.tool) || (call.fingerprint !== undefined && facts.approvedOps.has(call.fingerprint));
      return approved ? undefined : `'${rule.tool}' requires a prior approval in ${where}, and none is recorded`;
    }
  }
}
