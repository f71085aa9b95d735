/**
 * Dispatch-time guardrails. An inspector looks at one concrete tool call —
 * `(tool, params)` — and allows it, warns about it, or denies it. This is a
 * separate mechanism from action-level policy rules: it runs on the call as
 * it is about to be made.
 */
import type { JsonValue } from "@car/ir";

export type InspectionResult = { verdict: "allow" } | { verdict: "warn"; reason: string } | { verdict: "deny"; reason: string };

export const ALLOW: InspectionResult = Object.freeze({ verdict: "allow" });

export interface Inspector {
  /** Stable name, reported as the finding's rule (`egress`, `repetition`). */
  readonly name: string;
  inspect(tool: string, params: JsonValue): InspectionResult;
}

export interface InspectionOutcome {
  name: string;
  result: InspectionResult;
}

/** Runs inspectors in order and stops after the first deny: one refusal is enough to stop the call. */
export class InspectorChain {
  readonly #inspectors: Inspector[] = [];

  with(inspector: Inspector): this {
    this.#inspectors.push(inspector);
    return this;
  }

  inspect(tool: string, params: JsonValue): InspectionOutcome[] {
    const outcomes: InspectionOutcome[] = [];
    for (const inspector of this.#inspectors) {
      const result = inspector.inspect(tool, params);
      outcomes.push({ name: inspector.name, result });
      if (result.verdict === "deny") break;
    }
    return outcomes;
  }

  /** The chain's verdict: the first deny, else every warning joined, else allow. */
  verdict(tool: string, params: JsonValue): InspectionResult {
    const outcomes = this.inspect(tool, params);
    const deny = outcomes.find((o) => o.result.verdict === "deny");
    if (deny) return deny.result;
    const warnings = outcomes.flatMap((o) => (o.result.verdict === "warn" ? [`${o.name}: ${o.result.reason}`] : []));
    return warnings.length > 0 ? { verdict: "warn", reason: warnings.join("; ") } : ALLOW;
  }
}
