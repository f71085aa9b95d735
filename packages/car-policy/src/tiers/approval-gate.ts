/**
 * The approval gate. A session holds a standing tier; an action whose
 * required tier is above it — or any `full_access` action, which always needs
 * a human — is put to an approval callback. No answer within the timeout is a
 * refusal. Every decision made on that path (approve, reject, timeout, no
 * approver) is written to the approval ledger, and a decision already in the
 * ledger answers later evaluations of the same operation without asking
 * again. Actions within the standing tier are allowed without a ledger write:
 * nobody decided anything.
 *
 * An optional posture lookup (per agent, per tier: `always_allow`,
 * `require_approval`, `deny`) refines this; without one the tier rules above
 * apply unchanged.
 *
 * An approval binds what was approved (DECISIONS §22): a recorded decision
 * answers only evaluations its scope covers (run, agent, uses, expiry), and
 * the approval that admitted an action's declared form (`$id.output`
 * references unresolved) answers for a resolved form only when that form's
 * own tier is within the standing tier. A resolved form above it needs a
 * decision on its own fingerprint: the approver is asked when one is
 * attached (the hook a supervisor plugs into), otherwise it is refused.
 */
import type { Action, Clock, Timers, ToolSchema } from "@car/ir";
import { isCarError, systemClock, systemTimers } from "@car/ir";
import { approvalOutcome } from "./approval-answer.ts";
import type { ApprovalWord } from "./approval-answer.ts";
import type { ApprovalLedger, ApprovalRecord } from "./approval-ledger.ts";
import { type ActionClassification, classifyAction } from "./classify-action.ts";
import { operationFingerprint } from "./operation-fingerprint.ts";
import { type PermissionTier, tierRank } from "./permission-tier.ts";

export type GateVerdict = "allow" | "needs_approval" | "deny";
export type Posture = "always_allow" | "require_approval" | "deny";

/** What the approver is asked. */
export interface ApprovalRequest {
  fingerprint: string;
  action: Action;
  required_tier: PermissionTier;
  granted_tier: PermissionTier;
  reasons: string[];
  session_id: string;
}

/**
 * The approver's answer, from the closed vocabulary (approval-answer.ts).
 * `reviewer` is who decided; it defaults to `approver`.
 */
export type ApprovalAnswer = ApprovalWord | { decision: ApprovalWord; reviewer?: string; reason?: string };

/** Asks a human (or a policy service). `signal` aborts when the gate stops waiting. */
export type ApprovalCallback = (request: ApprovalRequest, signal: AbortSignal) => Promise<ApprovalAnswer>;

export interface ApprovalGateOptions {
  ledger: ApprovalLedger;
  sessionId: string;
  /** The session's standing tier. Default `sandbox_edit`. */
  grantedTier?: PermissionTier;
  approver?: ApprovalCallback;
  /** How long to wait for the approver. Default 60 s. */
  timeoutMs?: number;
  /** How long a recorded decision applies; `null` (default) for as long as the ledger keeps it. */
  decisionTtlMs?: number | null;
  clock?: Clock;
  timers?: Timers;
  /** The agent the gate's session acts for: decisions scoped to another agent do not answer for it. */
  agentId?: string;
  /** A per-agent posture for the required tier, when the host has one (possibly from a database, hence the promise). */
  posture?: (tier: PermissionTier, action: Action) => Posture | undefined | Promise<Posture | undefined>;
}

export interface GateDecision {
  action_id: string;
  fingerprint: string;
  decision: GateVerdict;
  required: PermissionTier;
  granted: PermissionTier;
  reason?: string;
  /** The ledger record that decided, when one did. */
  record?: ApprovalRecord;
  /** When `authorize` asked the approver: how long the answer took (a timeout included), ms. */
  waited_ms?: number;
}

/** What an evaluation is for: its run (for run-scoped decisions), and whether it admits an execution. */
export interface EvaluateOptions {
  /** The run the action belongs to (the runtime's run id). */
  run_id?: string;
  /**
   * The verdict admits an execution: a use-limited decision that allows it
   * spends one use. Off for questions that run nothing (`permission.evaluate`).
   */
  spend?: boolean;
  /**
   * A supervisor escalated the proposal (its `escalate` verdict): every
   * action needs a recorded approval, whatever its tier or the agent's
   * `always_allow` posture — the decision is handed to the ledger.
   */
  escalated?: boolean;
  /** The approval that admitted the action's declared form: it answers for the resolved form only within the standing tier (DECISIONS §22). */
  admitted?: ApprovalRecord;
}

/** What `authorize` may be told besides the action. */
export interface AuthorizeOptions extends EvaluateOptions {
  /** Called just before the approver is asked (not when the ledger or the tiers answer). */
  asking?: (request: ApprovalRequest) => void;
}

export class ApprovalGate {
  #granted: PermissionTier;
  readonly #options: ApprovalGateOptions;
  readonly #clock: Clock;
  readonly #timers: Timers;

  constructor(options: ApprovalGateOptions) {
    this.#options = options;
    this.#granted = options.grantedTier ?? "sandbox_edit";
    this.#clock = options.clock ?? systemClock;
    this.#timers = options.timers ?? systemTimers;
  }

  /** Whether an approver is configured: `authorize` can ask someone instead of refusing. */
  get canAsk(): boolean {
    return this.#options.approver !== undefined;
  }

  get grantedTier(): PermissionTier {
    return this.#granted;
  }

  setTier(tier: PermissionTier): PermissionTier {
    this.#granted = tier;
    return tier;
  }

  /**
   * This gate with its standing tier capped at `ceiling` (a skill's
   * `deployment_tier`): `min(granted, ceiling)`, never wider. The same
   * ledger, approver and postures answer, so a capped action escalates
   * into the same approvals as any other. A snapshot: a later `setTier`
   * on either gate does not move the other.
   */
  capped(ceiling: PermissionTier): ApprovalGate {
    const granted = tierRank(ceiling) < tierRank(this.#granted) ? ceiling : this.#granted;
    return new ApprovalGate({ ...this.#options, grantedTier: granted });
  }

  /** The verdict without asking anyone: `needs_approval` where `authorize` would call the approver. */
  async evaluate(action: Action, schema?: ToolSchema, how: EvaluateOptions = {}): Promise<GateDecision> {
    return this.#evaluate(action, classifyAction(action, schema), how.admitted?.decision === "approved" ? how.admitted : undefined, how);
  }

  /**
   * `admitted` is the approval that let this action's declared form (with
   * `$id.output` references) through admission. It answers for the resolved
   * form only when that form's own tier is within the standing tier (and is
   * not `full_access`, which always needs a human): approving a template is
   * not approving whatever it resolves to (DECISIONS §22). Above that, the
   * resolved operation needs a decision of its own fingerprint.
   */
  async #evaluate(action: Action, { tier, reasons }: ActionClassification, admitted: ApprovalRecord | undefined, how: EvaluateOptions): Promise<GateDecision> {
    const fingerprint = operationFingerprint(action);
    const granted = this.#granted;
    const base = { action_id: action.id, fingerprint, required: tier, granted };
    const looked = this.#options.posture?.(tier, action);
    const posture = looked instanceof Promise ? await looked : looked;
    if (posture === "deny") return { ...base, decision: "deny", reason: `the agent's posture denies ${tier} actions` };
    const carried = admitted !== undefined && tier !== "full_access" && tierRank(tier) <= tierRank(granted) ? admitted : undefined;
    const now = this.#clock.now();
    let recorded = await this.#options.ledger.latest(fingerprint, now, { run_id: how.run_id, agent_id: this.#options.agentId });
    const escalated = how.escalated === true;
    const mustAsk = escalated || posture === "require_approval" || tier === "full_access" || tierRank(tier) > tierRank(granted);
    // A use-limited approval that this execution rests on spends a use now; none left means it does not answer.
    const restsOn =
      mustAsk && (escalated || posture !== "always_allow") && recorded?.decision === "approved" && tierRank(recorded.required_tier) >= tierRank(tier);
    if (how.spend === true && restsOn && recorded?.uses !== undefined) {
      if (!(await this.#options.ledger.consume(recorded!, now))) recorded = undefined;
    }
    const prior = recorded ?? carried;
    // A recorded approval counts only at or above the operation's true tier, so an under-scoped approval cannot widen access.
    if (prior?.decision === "rejected") return { ...base, decision: "deny", reason: `rejected by ${prior.reviewer}`, record: prior };
    if (prior?.decision === "approved" && tierRank(prior.required_tier) >= tierRank(tier)) {
      return { ...base, decision: "allow", reason: `approved by ${prior.reviewer}`, record: prior };
    }
    if (escalated) return { ...base, decision: "needs_approval", reason: "escalated by a supervisor" };
    if (posture === "always_allow") return { ...base, decision: "allow", reason: `the agent's posture allows ${tier} actions` };
    if (!mustAsk) return { ...base, decision: "allow" };
    return { ...base, decision: "needs_approval", reason: reasons.join("; ") || `requires ${tier}` };
  }

  /**
   * `evaluate`, then asks the approver for anything that needs approval,
   * recording the outcome. `asking` is told just before the approver is
   * asked, so a caller can put the start of the wait on its own record;
   * `admitted`: see `#evaluate`.
   */
  async authorize(action: Action, schema?: ToolSchema, how: AuthorizeOptions = {}): Promise<GateDecision> {
    const { asking, admitted } = how;
    const classification = classifyAction(action, schema);
    const evaluated = await this.#evaluate(action, classification, admitted?.decision === "approved" ? admitted : undefined, how);
    if (evaluated.decision !== "needs_approval") return evaluated;
    const { tier, reasons } = classification;
    const request: ApprovalRequest = {
      fingerprint: evaluated.fingerprint,
      action,
      required_tier: tier,
      granted_tier: evaluated.granted,
      reasons,
      session_id: this.#options.sessionId,
    };
    const asks = this.canAsk;
    if (asks) asking?.(request);
    const askedAt = this.#clock.now();
    const answer = await this.#ask(request);
    const now = this.#clock.now();
    const waited = asks ? { waited_ms: now - askedAt } : {};
    // Not a decision: refused this time, and nothing goes on the record.
    if ("invalid" in answer) return { ...evaluated, decision: "deny", reason: answer.invalid, ...waited };
    const ttl = this.#options.decisionTtlMs ?? null;
    const record: ApprovalRecord = {
      fingerprint: evaluated.fingerprint,
      decision: answer.approved ? "approved" : "rejected",
      required_tier: tier,
      reviewer: answer.reviewer,
      decided_at: now,
      expires_at: ttl === null ? null : now + ttl,
      ...(answer.reason !== undefined ? { reason: answer.reason } : {}),
      session_id: this.#options.sessionId,
      action_id: action.id,
      ...(action.tool !== undefined ? { tool: action.tool } : {}),
    };
    await this.#options.ledger.record(record);
    return {
      ...evaluated,
      decision: answer.approved ? "allow" : "deny",
      ...(answer.reason !== undefined ? { reason: answer.reason } : {}),
      record,
      ...waited,
    };
  }

  async #ask(request: ApprovalRequest): Promise<{ approved: boolean; reviewer: string; reason?: string } | { invalid: string }> {
    const approver = this.#options.approver;
    if (approver === undefined) return { approved: false, reviewer: "none", reason: "no approval channel is configured" };
    const timeoutMs = this.#options.timeoutMs ?? 60_000;
    const controller = new AbortController();
    let timer: unknown;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = this.#timers.setTimeout(() => resolve("timeout"), timeoutMs);
    });
    try {
      const answer = await Promise.race([approver(request, controller.signal), timedOut]);
      if (answer === "timeout") {
        controller.abort();
        return { approved: false, reviewer: "timeout", reason: `no answer within ${timeoutMs} ms` };
      }
      const word = typeof answer === "object" && answer !== null ? answer.decision : answer;
      let approved: boolean;
      try {
        approved = approvalOutcome(word) === "approved";
      } catch (error) {
        if (isCarError(error)) return { invalid: `the approver's answer is not a decision: ${error.message}` };
        throw error;
      }
      if (typeof answer !== "object" || answer === null) return { approved, reviewer: "approver" };
      return {
        approved,
        reviewer: answer.reviewer ?? "approver",
        ...(answer.reason !== undefined ? { reason: answer.reason } : {}),
      };
    } catch (err) {
      // An approver that fails has not approved.
      return { approved: false, reviewer: "approver", reason: `the approver failed: ${err instanceof Error ? err.message : String(err)}` };
    } finally {
      this.#timers.clearTimeout(timer);
    }
  }
}
