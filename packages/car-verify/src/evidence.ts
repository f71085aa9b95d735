/**
 * `verify`'s `evidence` block: the verifier's declared scope. Each check says
 * what a pass establishes, what it cannot establish even on a pass, whether
 * it ran and how many findings it made, so a `valid: true` is read with its
 * blind spots in view rather than as a guarantee.
 *
 * `confidence` is coverage, not a probability of success: the mean, over the
 * checks that apply to this proposal, of how much of the proposal each
 * covered (1 when it ran in full, 0 when it could not run, and for
 * `param_schema` the share of tool calls whose parameters met a schema).
 */
import type { EvidenceTier, VerificationEvidence } from "@car/ir";

export type CheckName =
  | "proposal_fields"
  | "action_limit"
  | "dependency_graph"
  | "state_walk"
  | "write_conflicts"
  | "static_gate"
  | "param_schema"
  | "repeated_calls"
  | "compensation"
  | "trace_rules";

interface CheckScope {
  readonly verifies: string;
  readonly cannot_verify: string;
  readonly tier: EvidenceTier;
}

const SCOPE: Readonly<Record<CheckName, CheckScope>> = {
  proposal_fields: {
    verifies: "every field is one the Agent IR names",
    cannot_verify: "what an unknown field was meant to do (it is kept, not acted on)",
    tier: "decision_procedure",
  },
  action_limit: { verifies: "the proposal has at most max_actions actions", cannot_verify: "how long the actions take", tier: "decision_procedure" },
  dependency_graph: {
    verifies: "action ids are unique, every dependency names an action, and the graph has no cycle",
    cannot_verify: "that the declared dependencies are all the actions really need",
    tier: "decision_procedure",
  },
  state_walk: {
    verifies: "each precondition and state dependency holds over the declared effects, in dependency order",
    cannot_verify: "effects a tool has without declaring them, and values known only at run time",
    tier: "decision_procedure",
  },
  write_conflicts: {
    verifies: "no two actions without a dependency path between them write the same declared key",
    cannot_verify: "writes a tool makes without declaring them",
    tier: "decision_procedure",
  },
  static_gate: {
    verifies: "state actions name their keys, and no key is computed from another action's output",
    cannot_verify: "whether the keys hold what the plan expects",
    tier: "decision_procedure",
  },
  param_schema: {
    verifies: "each tool_call names a registered tool and its parameters match the tool's declared schema",
    cannot_verify: "parameters holding $<id>.output references (checked at dispatch), tools registered without a schema, and what the tool does",
    tier: "decision_procedure",
  },
  repeated_calls: {
    verifies: "no identical tool call repeats often enough to look like a runaway loop",
    cannot_verify: "whether a repeated call is intended (a poll) or a loop: the step from a count to a loop is a proxy",
    tier: "heuristic",
  },
  compensation: {
    verifies: "declared compensations name tools or actions that exist and are not run forward",
    cannot_verify: "that running a compensation undoes what the action did",
    tier: "decision_procedure",
  },
  trace_rules: {
    verifies: "no order the dependency graph permits breaks a registered trace rule",
    cannot_verify: "orders the runtime's retries or replans introduce",
    tier: "decision_procedure",
  },
};

const ASSUMPTIONS = [
  "actions change state only through their declared effects (expected_effects, a state_write's own key)",
  "the starting state is the one given ({} when none is)",
  "every dispatched tool call succeeds (verify.monte_carlo samples failures)",
];

const RESIDUAL_RISKS = [
  "a tool may fail, time out or return something unexpected at run time",
  "policies, permission tiers and supervision are decided at admission, not by verify",
];

/** What one check did in this call. `coverage` is 0..1, or null when the check does not apply to this proposal. */
interface CheckRun {
  name: CheckName;
  ran: boolean;
  findings: number;
  coverage: number | null;
}

/** Collects each check's outcome as `verify` runs them, then states the scope. */
export class EvidenceLog {
  readonly #runs: CheckRun[] = [];
  readonly #untested: string[] = [];

  /** A check that ran (or not) over the proposal; `findings` issues came from it. `coverage` null: the check does not apply here. */
  record(name: CheckName, ran: boolean, findings: number, coverage: number | null = ran ? 1 : 0): void {
    this.#runs.push({ name, ran, findings, coverage });
  }

  /** Something of the proposal no check examined. */
  untested(region: string): void {
    this.#untested.push(region);
  }

  evidence(): VerificationEvidence {
    const applicable = this.#runs.filter((r) => r.coverage !== null);
    const confidence = applicable.length === 0 ? 1 : applicable.reduce((sum, r) => sum + r.coverage!, 0) / applicable.length;
    for (const r of this.#runs) if (!r.ran && r.coverage !== null) this.#untested.push(`the ${r.name} check did not run`);
    return {
      checks: this.#runs.map((r) => ({ name: r.name, ran: r.ran, ...SCOPE[r.name], findings: r.findings })),
      assumptions: [...ASSUMPTIONS],
      untested_regions: this.#untested,
      residual_risks: [...RESIDUAL_RISKS],
      confidence: Math.round(confidence * 1e6) / 1e6,
    };
  }
}
