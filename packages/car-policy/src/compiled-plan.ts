/**
 * One tool's rules arranged for a fast check, built once per rule-set
 * change. It returns exactly what calling each rule's `evaluate` in order
 * returns (the engine's reference path), in three steps:
 *
 * 1. every rule judges the call as sent: the substring rules together
 *    (`ParameterScan`: keywords, `contains`, regexes with required
 *    literals), the others through `evaluate` in registration order (so
 *    stateful rules such as rate limits see the same calls as before);
 * 2. the rules that also judge the normalised call and passed as sent judge
 *    it, built at most once and only where the plan's `NormalisationIndex`
 *    says a rule could match it — for most calls nothing is built;
 * 3. the violations, in the plan's rule order.
 *
 * A rule that also judges the normalised call is run as its two halves
 * (`splitOf`), so no wrapper sits between the engine and the rule. The
 * scanned rules of step 1 and the rules of step 2 are pure substring and
 * regex tests; running them after the others changes nothing a rule can
 * observe.
 */
import type { Action, PolicyViolation } from "@car/ir";
import { LazyCheckContext } from "./check-context.ts";
import type { PolicyRule } from "./engine.ts";
import { buildNormalisedCall } from "./gate/normalised-call.ts";
import { NormalisationIndex } from "./gate/normalisation-index.ts";
import { ParameterScan } from "./parameter-scan.ts";
import { scanShapeOf, splitOf } from "./rule-shapes.ts";
import type { StateLookup } from "./state.ts";

export class CompiledPlan {
  readonly #rules: readonly PolicyRule[];
  /** Rules run through `evaluate` (their as-sent half, when split), with their positions. */
  readonly #generic: PolicyRule[] = [];
  readonly #genericAt: number[] = [];
  readonly #scan = new ParameterScan();
  /** The normalised halves, by the position of the rule they belong to. */
  readonly #onNormal: (readonly PolicyRule[])[] = [];
  readonly #onNormalAt: number[] = [];
  readonly #index: NormalisationIndex;

  constructor(rules: readonly PolicyRule[]) {
    this.#rules = rules;
    this.#index = NormalisationIndex.of(rules);
    rules.forEach((rule, at) => {
      const split = splitOf(rule);
      const asSent = split?.asSent ?? rule;
      const shape = scanShapeOf(asSent);
      if (shape !== undefined) this.#scan.add(at, asSent, shape);
      else {
        this.#generic.push(asSent);
        this.#genericAt.push(at);
      }
      if (split !== undefined) {
        this.#onNormal.push(split.onNormal);
        this.#onNormalAt.push(at);
      }
    });
  }

  check(action: Action, state: StateLookup): PolicyViolation[] {
    const context = new LazyCheckContext(action, this.#index);
    const findings = new Findings();
    const generic = this.#generic;
    for (let i = 0; i < generic.length; i++) {
      const rule = generic[i] as PolicyRule;
      const reason = evaluateSafely(rule, action, state, context);
      if (reason !== undefined) findings.add(this.#genericAt[i] as number, reason);
    }
    const onNormal = this.#onNormal;
    // Whether some parameter may have a normal form; the scan, when it runs, tells while reading them.
    let normalisable = onNormal.length > 0;
    if (this.#scan.size > 0) {
      const before = findings.size;
      try {
        normalisable = this.#scan.scan(action, state, context, findings, normalisable);
      } catch {
        // Only reading a parameter can throw here: run each rule alone, so each denies as it would.
        findings.truncate(before);
        for (const { rule, position } of this.#scan.entries()) {
          const reason = evaluateSafely(rule, action, state, context);
          if (reason !== undefined) findings.add(position, reason);
        }
      }
    }
    if (normalisable) {
      let normal: ReturnType<typeof buildNormalisedCall> | null = null;
      for (let i = 0; i < onNormal.length; i++) {
        const at = this.#onNormalAt[i] as number;
        if (findings.has(at)) continue;
        if (normal === null) normal = buildNormalisedCall(action, context);
        if (normal === undefined) break;
        const halves = onNormal[i] as readonly PolicyRule[];
        for (let h = 0; h < halves.length; h++) {
          const reason = evaluateSafely(halves[h] as PolicyRule, normal.action, state, normal.context, (this.#rules[at] as PolicyRule).name);
          if (reason !== undefined) {
            findings.add(at, reason);
            break;
          }
        }
      }
    }
    return findings.violations(action.id, this.#rules);
  }
}

/** `rule.evaluate`, with a throw turned into the denial naming the rule (`name`: the whole rule's, for a half). */
export function evaluateSafely(rule: PolicyRule, action: Action, state: StateLookup, context: LazyCheckContext, name = rule.name): string | undefined {
  try {
    return rule.evaluate(action, state, context);
  } catch (err) {
    return `policy rule '${name}' failed while evaluating the action, so it denies: ${describeError(err)}`;
  }
}

function describeError(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** The reasons found in one check, by rule position; nothing allocated until the first. */
export class Findings {
  #at: number[] | undefined;
  #reasons: string[] | undefined;

  add(at: number, reason: string): void {
    (this.#at ??= []).push(at);
    (this.#reasons ??= []).push(reason);
  }

  get size(): number {
    return this.#at?.length ?? 0;
  }

  /** Forgets every finding after the first `size`. */
  truncate(size: number): void {
    if (this.#at !== undefined) this.#at.length = size;
    if (this.#reasons !== undefined) this.#reasons.length = size;
  }

  has(at: number): boolean {
    return this.#at?.includes(at) === true;
  }

  /** The violations in rule order (each position is found at most once). */
  violations(actionId: string, rules: readonly PolicyRule[]): PolicyViolation[] {
    const at = this.#at;
    const reasons = this.#reasons as string[];
    if (at === undefined) return [];
    const order = at.map((_, i) => i).sort((a, b) => (at[a] as number) - (at[b] as number));
    return order.map((i) => ({ policy_name: (rules[at[i] as number] as PolicyRule).name, action_id: actionId, reason: reasons[i] as string }));
  }
}
