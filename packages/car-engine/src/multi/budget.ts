/**
 * A run's spend ceiling (`BudgetLimits`): read strictly, then counted from
 * what each agent call reports in `AgentOutput.tokens`. The runtime refuses
 * to START an agent once any ceiling is reached; work already in flight is
 * the only overshoot. A ceiling it could not count is never taken on trust:
 * an unknown limit is refused up front, and under a token (or cost) ceiling a
 * call that reports no tokens (or no cost) stops the run from starting more,
 * since the ceiling can no longer be shown to hold.
 */
import { CarError, isJsonObject } from "@car/ir";
import type { AgentTokens, JsonValue } from "@car/ir";

/**
 * The ceilings, snake_case as on the wire; an omitted or null field is
 * unbounded. A spend ceiling is reached when the spend equals or passes it.
 */
export interface BudgetLimits {
  /** Most agent calls the run may start. */
  max_agents?: number | null;
  /** Wall-clock budget for the whole run, in milliseconds; agents in flight when it runs out are aborted. */
  max_duration_ms?: number | null;
  max_input_tokens?: number | null;
  max_output_tokens?: number | null;
  /** Input plus output tokens. */
  max_total_tokens?: number | null;
  max_cost_usd?: number | null;
}

/** The ceilings counted from the agents' reported spend. */
export type SpendLimit = "max_input_tokens" | "max_output_tokens" | "max_total_tokens" | "max_cost_usd";

const SPEND_LIMITS: readonly SpendLimit[] = ["max_input_tokens", "max_output_tokens", "max_total_tokens", "max_cost_usd"];
const COUNT_LIMITS = ["max_agents", "max_duration_ms", "max_input_tokens", "max_output_tokens", "max_total_tokens"] as const;
export const BUDGET_LIMIT_KEYS: readonly string[] = [...COUNT_LIMITS, "max_cost_usd"];

/** Float sums of prices drift by far less than this; it keeps a reached cost ceiling from reading as just below. */
const COST_TOLERANCE_USD = 1e-9;

/** What a run spent, summed from its agents' reports. */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  cost_usd: number;
  /** Agent calls that reported no `tokens` (including calls that threw, timed out or answered malformed output). */
  unmetered_calls: number;
}

/** The ceiling that stopped the run; `spent` is null when it tripped because a call's spend could not be counted. */
export interface BudgetExceeded {
  limit: SpendLimit;
  threshold: number;
  spent: number | null;
}

/** Reads a `budget` option strictly: every key known, every value a non-negative number of the right kind. */
export function parseBudget(value: unknown): BudgetLimits {
  if (value === undefined || value === null) return {};
  if (!isJsonObject(value as JsonValue)) throw new CarError("invalid_params", `budget must be an object of limits (${BUDGET_LIMIT_KEYS.join(", ")})`);
  const raw = value as Record<string, unknown>;
  const limits: BudgetLimits = {};
  for (const key of Object.keys(raw)) {
    if (!BUDGET_LIMIT_KEYS.includes(key)) {
      const near = closest(key, BUDGET_LIMIT_KEYS);
      throw new CarError(
        "invalid_params",
        `budget.${key} is not a limit this runtime enforces${near === undefined ? "" : ` (did you mean ${near}?)`}; the limits are ${BUDGET_LIMIT_KEYS.join(", ")}`,
      );
    }
    const v = raw[key];
    if (v === null || v === undefined) continue;
    const integer = key !== "max_cost_usd";
    const zeroAllowed = key !== "max_duration_ms";
    const ok = typeof v === "number" && Number.isFinite(v) && (integer ? Number.isInteger(v) : true) && (zeroAllowed ? v >= 0 : v > 0);
    if (!ok) {
      const kind = integer ? (zeroAllowed ? "a non-negative integer" : "a positive integer") : "a non-negative number";
      throw new CarError("invalid_params", `budget.${key} must be ${kind}, got ${JSON.stringify(v) ?? String(v)}`);
    }
    limits[key as keyof BudgetLimits] = v as number;
  }
  return limits;
}

/** Sums the spend of one run and says when a ceiling has been reached. */
export class SpendMeter {
  readonly #limits: BudgetLimits;
  readonly #usage: Usage = { input_tokens: 0, output_tokens: 0, total_tokens: 0, cost_usd: 0, unmetered_calls: 0 };
  /** The first ceiling reached, with a sentence saying why; sticky. */
  #tripped: { limit: SpendLimit; unmetered: boolean; detail: string } | undefined;

  constructor(limits: BudgetLimits) {
    this.#limits = limits;
  }

  /** Counts one finished call: its reported tokens, or undefined when it reported none. */
  record(agent: string, tokens: AgentTokens | null | undefined): void {
    const u = this.#usage;
    if (tokens === undefined || tokens === null) {
      u.unmetered_calls++;
      const counted = SPEND_LIMITS.find((l) => l !== "max_cost_usd" && this.#limit(l) !== undefined);
      if (counted !== undefined) this.#trip(counted, true, `agent '${agent}' reported no token usage, so the run's ${counted} cannot be counted`);
      else if (this.#limit("max_cost_usd") !== undefined) this.#unpriced(agent);
      return;
    }
    u.input_tokens += tokens.input_tokens;
    u.output_tokens += tokens.output_tokens;
    u.total_tokens = u.input_tokens + u.output_tokens;
    if (tokens.cost_usd !== undefined) u.cost_usd += tokens.cost_usd;
    else if (this.#limit("max_cost_usd") !== undefined) this.#unpriced(agent);
    for (const limit of SPEND_LIMITS) {
      const threshold = this.#limit(limit);
      if (threshold === undefined) continue;
      const spent = this.#spent(limit);
      if (limit === "max_cost_usd" ? spent >= threshold - COST_TOLERANCE_USD : spent >= threshold) {
        this.#trip(limit, false, `the run's ${limit} of ${threshold} is spent (${spent} so far)`);
      }
    }
  }

  /** Why no further agent may start, or undefined while every ceiling holds (a ceiling of 0 holds none). */
  refusal(): string | undefined {
    if (this.#tripped === undefined) {
      const zero = SPEND_LIMITS.find((l) => this.#limit(l) === 0);
      if (zero !== undefined) this.#trip(zero, false, `the run's ${zero} is 0`);
    }
    return this.#tripped?.detail;
  }

  get usage(): Usage {
    return { ...this.#usage };
  }

  get exceeded(): BudgetExceeded | null {
    const t = this.#tripped;
    if (t === undefined) return null;
    return { limit: t.limit, threshold: this.#limit(t.limit)!, spent: t.unmetered ? null : this.#spent(t.limit) };
  }

  /** The spend ceilings that were set, for the run's start event. */
  get limits(): Partial<Record<SpendLimit, number>> {
    const set: Partial<Record<SpendLimit, number>> = {};
    for (const l of SPEND_LIMITS) {
      const v = this.#limit(l);
      if (v !== undefined) set[l] = v;
    }
    return set;
  }

  #unpriced(agent: string): void {
    this.#trip("max_cost_usd", true, `agent '${agent}' reported no cost_usd, so the run's max_cost_usd cannot be counted`);
  }

  #limit(limit: SpendLimit): number | undefined {
    return this.#limits[limit] ?? undefined;
  }

  #spent(limit: SpendLimit): number {
    const u = this.#usage;
    if (limit === "max_input_tokens") return u.input_tokens;
    if (limit === "max_output_tokens") return u.output_tokens;
    if (limit === "max_total_tokens") return u.total_tokens;
    return u.cost_usd;
  }

  #trip(limit: SpendLimit, unmetered: boolean, detail: string): void {
    this.#tripped ??= { limit, unmetered, detail };
  }
}

/** The candidate within two edits of `word`, if there is one (a misspelled limit). */
function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(word, candidate);
    if (distance <= 2 && (best === undefined || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]!;
}
