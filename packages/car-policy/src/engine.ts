/**
 * The policy engine: an ordered list of rules, every one of which sees every
 * action. Rules only ever add denials, so `check` never short-circuits — a
 * caller (and the audit log) sees every reason an action was refused, and a
 * stateful rule such as a rate limit observes every admission attempt.
 */
import { type Action, type JsonValue, type PolicyViolation, stringCoerce } from "@car/ir";
import { type PolicyState, stateLookup, type StateLookup } from "./state.ts";

/** One rule. `evaluate` returns a reason to deny, or `undefined` to pass. */
export interface PolicyRule {
  readonly name: string;
  /**
   * Set when the rule can only ever deny calls to this one tool. The engine
   * then skips it for every other tool, which is what keeps `check` cheap
   * with many rules loaded.
   */
  readonly tool?: string;
  evaluate(action: Action, state: StateLookup, context: CheckContext): string | undefined;
}

/** Per-check values rules share instead of each recomputing them. */
export interface CheckContext {
  /** Every parameter as `[key, string-coerced value]`, computed once per check. */
  paramStrings(): readonly (readonly [string, string])[];
}

interface Registered {
  seq: number;
  rule: PolicyRule;
}

export class PolicyEngine {
  readonly #rules: Registered[] = [];
  /** Rules that apply to any tool, and rules indexed by the one tool they govern; both in registration order. */
  #anyTool: Registered[] = [];
  #byTool = new Map<string, Registered[]>();
  #seq = 0;

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
    const tool = entry.rule.tool;
    if (tool === undefined) {
      this.#anyTool.push(entry);
      return;
    }
    const list = this.#byTool.get(tool);
    if (list) list.push(entry);
    else this.#byTool.set(tool, [entry]);
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
    const context = new LazyCheckContext(action);
    const violations: PolicyViolation[] = [];
    const general = this.#anyTool;
    const specific = (action.tool !== undefined && this.#byTool.get(action.tool)) || NONE;
    // Merge the two ordered lists so violations come out in registration order.
    let g = 0;
    let s = 0;
    while (g < general.length || s < specific.length) {
      const next = s >= specific.length || (g < general.length && (general[g] as Registered).seq < (specific[s] as Registered).seq) ? general[g++] : specific[s++];
      const rule = (next as Registered).rule;
      let reason: string | undefined;
      try {
        reason = rule.evaluate(action, lookup, context);
      } catch (err) {
        reason = `policy rule '${rule.name}' failed while evaluating the action, so it denies: ${describeError(err)}`;
      }
      if (reason !== undefined) violations.push({ policy_name: rule.name, action_id: action.id, reason });
    }
    return violations;
  }
}

const NONE: Registered[] = [];

class LazyCheckContext implements CheckContext {
  #strings: (readonly [string, string])[] | undefined;

  constructor(readonly action: Action) {}

  paramStrings(): readonly (readonly [string, string])[] {
    if (this.#strings === undefined) {
      const params = this.action.parameters;
      this.#strings = Object.keys(params).map((k) => [k, stringCoerce(params[k] as JsonValue)] as const);
    }
    return this.#strings;
  }
}

const EMPTY_STATE: Record<string, JsonValue> = Object.freeze(Object.create(null) as Record<string, JsonValue>);
const EMPTY_LOOKUP: StateLookup = { get: () => undefined };

function describeError(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
