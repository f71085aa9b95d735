/**
 * The policy engine: an ordered list of rules, every one of which sees every
 * action. Rules only ever add denials, so `check` never short-circuits — a
 * caller (and the audit log) sees every reason an action was refused, and a
 * stateful rule such as a rate limit observes every admission attempt.
 */
import type { Action, JsonValue, PolicyViolation } from "@car/ir";
import { type CheckContext, LazyCheckContext } from "./check-context.ts";
import { CompiledPlan, evaluateSafely } from "./compiled-plan.ts";
import type { NormalisedReads } from "./gate/normalisation-index.ts";
import { type PolicyState, stateLookup, type StateLookup } from "./state.ts";

export type { CheckContext } from "./check-context.ts";

/** One rule. `evaluate` returns a reason to deny, or `undefined` to pass. */
export interface PolicyRule {
  readonly name: string;
  /**
   * Set when the rule can only ever deny calls to this one tool. The engine
   * then skips it for every other tool, which is what keeps `check` cheap
   * with many rules loaded.
   */
  readonly tool?: string;
  /** Set when the rule also judges the normalised call: what it reads there, so the engine normalises only that. */
  readonly normalised?: NormalisedReads;
  evaluate(action: Action, state: StateLookup, context: CheckContext): string | undefined;
}

interface Registered {
  seq: number;
  rule: PolicyRule;
}

/**
 * What `check` runs for one tool: its rules compiled (the default), or, as
 * the reference, the rules themselves, each `evaluate`d in order with every
 * command and URL normalised.
 */
type Plan = CompiledPlan | readonly PolicyRule[];

export interface PolicyEngineOptions {
  /**
   * Normalise only the parameters a rule could match once normalised (the
   * default). `false` normalises every command and URL a rule set with
   * normalised rules meets: the reference the index is tested against.
   */
  normalisationIndex?: boolean;
}

export class PolicyEngine {
  readonly #rules: Registered[] = [];
  /** Rules that apply to any tool, and rules indexed by the one tool they govern; both in registration order. */
  #anyTool: Registered[] = [];
  #byTool = new Map<string, Registered[]>();
  /**
   * What `check` runs for each tool that has rules of its own: its rules and
   * the any-tool rules merged into registration order. Built on first use
   * after a change, so a check is one flat loop. Only tools named by rules get
   * an entry — a tool name from an action never grows this map.
   */
  #plans = new Map<string, Plan>();
  #anyToolPlan: Plan | undefined;
  #seq = 0;
  readonly #indexed: boolean;

  constructor(options: PolicyEngineOptions = {}) {
    this.#indexed = options.normalisationIndex !== false;
  }

  /**
   * Adds a rule. Names need not be unique: two file rules on the same
   * tool/param share a stable name, and dropping one because the other
   * arrived first would silently loosen the policy.
   */
  register(rule: PolicyRule): void {
    const entry = { seq: this.#seq++, rule };
    this.#rules.push(entry);
    this.#index(entry);
  }

  #index(entry: Registered): void {
    this.#invalidatePlans();
    const tool = entry.rule.tool;
    if (tool === undefined) {
      this.#anyTool.push(entry);
      return;
    }
    const list = this.#byTool.get(tool);
    if (list) list.push(entry);
    else this.#byTool.set(tool, [entry]);
  }

  #invalidatePlans(): void {
    this.#plans.clear();
    this.#anyToolPlan = undefined;
  }

  /** Removes every rule with this name; returns how many were removed. */
  unregister(name: string): number {
    let removed = 0;
    for (let i = this.#rules.length - 1; i >= 0; i--) {
      if (this.#rules[i]?.rule.name === name) {
        this.#rules.splice(i, 1);
        removed++;
      }
    }
    if (removed > 0) {
      this.#invalidatePlans();
      this.#anyTool = [];
      this.#byTool = new Map();
      for (const entry of this.#rules) this.#index(entry);
    }
    return removed;
  }

  /** Distinct rule names, in registration order. */
  names(): string[] {
    return [...new Set(this.#rules.map((r) => r.rule.name))];
  }

  get size(): number {
    return this.#rules.length;
  }

  /**
   * Every violation `action` raises against `state`. Never throws: a rule that
   * throws is itself a violation naming that rule (a broken guard denies).
   */
  check(action: Action, state: PolicyState = EMPTY_STATE): PolicyViolation[] {
    const lookup = state === EMPTY_STATE ? EMPTY_LOOKUP : stateLookup(state);
    const plan = this.#planFor(action.tool);
    if (plan instanceof CompiledPlan) return plan.check(action, lookup);
    const context = new LazyCheckContext(action);
    let violations: PolicyViolation[] | undefined;
    for (const rule of plan) {
      const reason = evaluateSafely(rule, action, lookup, context);
      if (reason !== undefined) (violations ??= []).push({ policy_name: rule.name, action_id: action.id, reason });
    }
    return violations ?? [];
  }

  #planFor(tool: string | undefined): Plan {
    if (tool !== undefined) {
      const plan = this.#plans.get(tool);
      if (plan !== undefined) return plan;
      const specific = this.#byTool.get(tool);
      if (specific !== undefined) {
        const merged = this.#plan(mergeBySeq(this.#anyTool, specific));
        this.#plans.set(tool, merged);
        return merged;
      }
    }
    return (this.#anyToolPlan ??= this.#plan(this.#anyTool.map((r) => r.rule)));
  }

  #plan(rules: readonly PolicyRule[]): Plan {
    return this.#indexed ? new CompiledPlan(rules) : rules;
  }
}

/** Two lists each in registration order → their rules in registration order. */
function mergeBySeq(a: readonly Registered[], b: readonly Registered[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const takeA = j >= b.length || (i < a.length && (a[i] as Registered).seq < (b[j] as Registered).seq);
    out.push(((takeA ? a[i++] : b[j++]) as Registered).rule);
  }
  return out;
}

const EMPTY_STATE: Record<string, JsonValue> = Object.freeze(Object.create(null) as Record<string, JsonValue>);
const EMPTY_LOOKUP: StateLookup = { get: () => undefined };
