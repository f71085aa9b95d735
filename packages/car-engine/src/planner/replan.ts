/**
 * The replan loop (reference `replan.set_config`, Node `setReplanConfig`):
 * when a run fails — an action `failed`, or with `replan_on_rejected` also
 * one `rejected` by a validator, policy or capability check — the failed
 * run has already been rolled back by the runtime; the proposer is asked
 * for a replacement plan, given what failed (tool, error, parameters), and
 * the replacement runs through the same execution path (the one admission)
 * as any proposal. At most `max_replans` replacements; `max_replans: 0`
 * (the default) is abort-on-failure, as before.
 *
 * Nothing is skipped for a replacement: it is parsed, verified and admitted
 * like the first plan (so `verify_before_execute` can only be `true`: a
 * caller asking to skip verification is refused, not ignored).
 */
import type { CostTarget, JsonObject, JsonValue, ParsedProposal, ProposalResult, ToolSchema } from "@car/ir";
import { CarError, isCarError, parseProposalWithGraph, sleep, type Timers } from "@car/ir";
import { MAX_PLAN_ATTEMPTS, type PlanFeedback, type PlanRequest } from "./plan-loop.ts";

/** The longest pause between a failure and the replan request: a minute. */
export const MAX_REPLAN_DELAY_MS = 60_000;
export const MAX_REPLANS = MAX_PLAN_ATTEMPTS - 1;

export interface ReplanConfig {
  /** Replacement plans asked for after a failure; 0 disables replanning. */
  max_replans: number;
  /** Pause before each replan request. */
  delay_ms: number;
  /** Always true: every plan is verified at admission. */
  verify_before_execute: true;
  /** Rejections (validator, policy, capability) trigger a replan too, not only runtime failures. */
  replan_on_rejected: boolean;
}

export const DEFAULT_REPLAN_CONFIG: ReplanConfig = Object.freeze({ max_replans: 0, delay_ms: 0, verify_before_execute: true, replan_on_rejected: false });

/**
 * Reads `{ max_replans, delay_ms?, verify_before_execute?, replan_on_rejected? }`
 * strictly: an unknown field, a value out of range, or `verify_before_execute:
 * false` (this runtime never skips verification) is `invalid_params`.
 */
export function parseReplanConfig(value: unknown): ReplanConfig {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new CarError("invalid_params", "replan config must be an object { max_replans, delay_ms?, verify_before_execute?, replan_on_rejected? }");
  }
  const raw = value as Record<string, unknown>;
  for (const key of Object.keys(raw)) {
    if (!Object.hasOwn(DEFAULT_REPLAN_CONFIG, key)) throw new CarError("invalid_params", `replan config: unknown field '${key.slice(0, 64)}'`);
  }
  const int = (key: "max_replans" | "delay_ms", max: number): number => {
    const v = raw[key] ?? DEFAULT_REPLAN_CONFIG[key];
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > max) throw new CarError("invalid_params", `${key} must be an integer from 0 to ${max}`);
    return v;
  };
  if (raw["max_replans"] === undefined || raw["max_replans"] === null) throw new CarError("invalid_params", "max_replans is required");
  const verify = raw["verify_before_execute"] ?? true;
  if (typeof verify !== "boolean") throw new CarError("invalid_params", "verify_before_execute must be a boolean");
  if (!verify) {
    throw new CarError("invalid_params", "verify_before_execute: false is refused: every plan, a replacement included, is verified at admission here");
  }
  const onRejected = raw["replan_on_rejected"] ?? false;
  if (typeof onRejected !== "boolean") throw new CarError("invalid_params", "replan_on_rejected must be a boolean");
  return {
    max_replans: int("max_replans", MAX_REPLANS),
    delay_ms: int("delay_ms", MAX_REPLAN_DELAY_MS),
    verify_before_execute: true,
    replan_on_rejected: onRejected,
  };
}

/** What failed in a run, as the replan request carries it: the offending tool, its error and its parameters. */
export interface ReplanFailure {
  action_id: string;
  status: string;
  tool: string | null;
  error: string | null;
  parameters: JsonObject;
}

/** The proposer: answers a replacement proposal (JSON text or object), or null to give up. */
export type ReplanProposer = (
  request: PlanRequest & { failures: ReplanFailure[]; failed_proposal_id: string },
  signal: AbortSignal | undefined,
) => Promise<unknown>;

export interface ReplanOptions {
  config: ReplanConfig;
  propose: ReplanProposer;
  /** Runs one plan through the host's one execution path (admission included). */
  execute: (proposal: ParsedProposal) => Promise<ProposalResult>;
  /** Reads the proposer's answer (a host scopes it first, e.g. to a tenant); `parseProposalWithGraph` by default. */
  parse?: (answer: JsonValue) => ParsedProposal;
  tools: () => ToolSchema[];
  target: CostTarget;
  timers: Timers;
  signal?: AbortSignal;
}

/** What triggers a replan: a failed action, and with `replan_on_rejected` a rejected one. */
function failuresOf(proposal: ParsedProposal, result: ProposalResult, onRejected: boolean): ReplanFailure[] {
  const byId = new Map(proposal.proposal.actions.map((a) => [a.id, a]));
  return result.results
    .filter((r) => r.status === "failed" || (onRejected && r.status === "rejected"))
    .map((r) => {
      const action = byId.get(r.action_id);
      return {
        action_id: r.action_id,
        status: r.status,
        tool: action?.tool ?? null,
        error: r.error ?? null,
        parameters: (action?.parameters ?? {}) as JsonObject,
      };
    });
}

export interface ReplanOutcome {
  /** The last run's result: the first plan's when no replan ran. */
  result: ProposalResult;
  /** Replacement plans run. */
  replans: number;
}

/**
 * Runs `first`, then — while its latest run failed and replans remain —
 * waits `delay_ms`, asks the proposer for a replacement and runs it. A
 * proposer that gives up (null), errs or answers something that does not
 * parse ends the loop with the last run's result: a replan never turns a
 * failure into an error of its own.
 */
export async function executeWithReplan(first: ParsedProposal, options: ReplanOptions): Promise<ReplanOutcome> {
  const { config } = options;
  const parse = options.parse ?? ((answer: JsonValue) => parseProposalWithGraph(answer));
  let current = first;
  let result = await options.execute(first);
  let replans = 0;
  const feedback: PlanFeedback[] = [];
  for (let replan = 1; replan <= config.max_replans; replan++) {
    const failures = failuresOf(current, result, config.replan_on_rejected);
    if (failures.length === 0) break;
    feedback.push({
      attempt: replan,
      verdict: "execution_failed",
      proposal_id: result.proposal_id,
      failures: failures.map((f) => ({ action_id: f.action_id, status: f.status, error: f.error })),
    });
    if (config.delay_ms > 0) await sleep(options.timers, config.delay_ms, options.signal);
    if (options.signal?.aborted === true) break;
    let answer: unknown;
    try {
      answer = await options.propose(
        {
          task: `replan proposal '${result.proposal_id}'`,
          attempt: replan,
          max_attempts: config.max_replans,
          feedback: [...feedback],
          tools: options.tools(),
          target: options.target,
          failures,
          failed_proposal_id: result.proposal_id,
        },
        options.signal,
      );
    } catch {
      break;
    }
    if (answer === null || answer === undefined) break;
    let next: ParsedProposal;
    try {
      next = parse(typeof answer === "string" ? (JSON.parse(answer) as JsonValue) : (answer as JsonValue));
    } catch (error) {
      if (error instanceof SyntaxError || isCarError(error)) break;
      throw error;
    }
    current = next;
    result = await options.execute(next);
    replans++;
  }
  return { result, replans };
}
