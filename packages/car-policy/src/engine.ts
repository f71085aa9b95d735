/**
 * The policy engine: an ordered list of rules, every one of which sees every
 * action. Rules only ever add denials, so `check` never short-circuits — a
 * caller (and the audit log) sees every reason an action was refused, and a
 * stateful rule such as a rate limit observes every admission attempt.
 */
import type { Action, JsonValue, PolicyViolation } from "@car/ir";
import { type PolicyState, stateLookup, type StateLookup } from "./state.ts";

/** One rule. `evaluate` returns a reason to deny, or `undefined` to pass. */
export interface PolicyRule {
  readonly name: string;
  evaluate(action: Action, state: StateLookup): string | undefined;
}

export class PolicyEngine {
  readonly #rules: PolicyRule[] = [];

  /**
   * Adds a rule. Names need not be unique: two file rules on the same
   * tool/param share a stable name, and dropping one because the other
   * arrived first would silently loosen the policy.
   */
  register(rule: PolicyRule): void {
    this.#rules.push(rule);
  }

  /** Removes every rule with this name; returns how many were removed. */
  unregister(name: string): number {
    let removed = 0;
    for (let i = this.#rules.length - 1; i >= 0; i--) {
      if (this.#rules[i]?.name === name) {
        this.#rules.splice(i, 1);
        removed++;
      }
    }
    return removed;
  }

  /** Distinct rule names, in registration order. */
  names(): string[] {
    return [...new Set(this.#rules.map((r) => r.name))];
  }

  get size(): number {
    return this.#rules.length;
  }

  /**
   * Every violation `action` raises against `state`. Never throws: a rule that
   * throws is itself a violation naming that rule (a broken guard denies).
   */
  check(action: Action, state: PolicyState = EMPTY_STATE): PolicyViolation[] {
    const lookup = stateLookup(state);
    const violations: PolicyViolation[] = [];
    for (const rule of this.#rules) {
      let reason: string | undefined;
      try {
        reason = rule.evaluate(action, lookup);
      } catch (err) {
        reason = `policy rule '${rule.name}' failed while evaluating the action, so it denies: ${describeError(err)}`;
      }
      if (reason !== undefined) violations.push({ policy_name: rule.name, action_id: action.id, reason });
    }
    return violations;
  }
}

const EMPTY_STATE: Record<string, JsonValue> = Object.freeze(Object.create(null) as Record<string, JsonValue>);

function describeError(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
