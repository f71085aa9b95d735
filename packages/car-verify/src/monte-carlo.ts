/**
 * `verify.monte_carlo`: how often a plan works when its tools may fail, and
 * what breaks first. Each trial walks the proposal as `simulate` does, but a
 * dispatched `tool_call` succeeds only with its tool's rate (a seeded draw);
 * a failure lands nothing and its data dependants are rejected before
 * dispatch (the car#622 rule). Static: no tool runs.
 *
 * Reproducible by construction: draws come from a SplitMix64 stream seeded by
 * `config.seed` (a fixed default), trials run in order, and every list in the
 * answer has a defined sort, so the same proposal, rates and seed give the
 * same answer byte for byte.
 *
 * Not modelled (as `simulate` does not): `failure_behavior`, partial effects,
 * correlated failures (draws are independent).
 */
import type { Action, JsonValue, Precondition } from "@car/ir";
import { CarError, canonicalJson, dependencyEdges, getOwn, isJsonObject } from "@car/ir";
import { checkPrecondition } from "@car/ir/internal";
import type { VerifyInput } from "./input.ts";
import { toParsed } from "./input.ts";
import type { StateInput } from "./state.ts";
import { stateMap } from "./state.ts";
import { dataPredecessors, flatEffects, simulatedWalk } from "./walk.ts";

export const MONTE_CARLO_DEFAULTS = Object.freeze({ trials: 1000, seed: 0, default_success_rate: 0.5, retry_attempts: 0 });
/** Bounds that keep one call's work finite: trials × actions draws at most. */
export const MAX_TRIALS = 100_000;
export const MAX_RETRY_ATTEMPTS = 10;

export interface MonteCarloConfig {
  trials?: number;
  /** A non-negative safe integer; echoed in the answer. */
  seed?: number;
  default_success_rate?: number;
  retry_attempts?: number;
}

/** A tool's execution record: dispatched calls (succeeded + failed) and how many succeeded. */
export interface ToolRecord {
  readonly succeeded: number;
  readonly dispatched: number;
}

export interface MonteCarloOptions {
  state?: StateInput;
  /** Per-tool rates supplied by the caller; they win over `history` per tool. Clamped to 0..1. */
  toolSuccessRates?: Readonly<Record<string, number>>;
  /** Observed dispatches per tool (e.g. the runtime's event log); a rate is `(succeeded + 1) / (dispatched + 2)`. */
  history?: ReadonlyMap<string, ToolRecord>;
  /** How many days of history `history` covers; reported in `rate_provenance`. 0 when none was read. */
  windowDays?: number;
  /** A GoalCondition evaluated on each trial's final state (see `goalEvaluator`). */
  goal?: JsonValue;
  config?: MonteCarloConfig;
}

export interface Distribution {
  mean: number;
  min: number;
  p50: number;
  p95: number;
  max: number;
}

export interface RateSource {
  tool: string;
  rate: number;
  source: "caller" | "trajectories" | "default";
  succeeded: number | null;
  dispatched: number | null;
}

export interface MonteCarloResult {
  trials: number;
  seed: number;
  p_goal_reached: number | null;
  goal_underivable_conditions: string[];
  p_all_effects_landed: number;
  tool_calls: Distribution;
  actions_executed: Distribution;
  state_distribution: { key: string; p_present: number; values: { value: JsonValue; probability: number }[] }[];
  action_outcomes: { action_id: string; p_rejected: number; p_failed: number; p_effects_landed: number; mean_blast_radius: number }[];
  rate_provenance: { window_days: number; trajectories_available: boolean; overridden_by_caller: string[]; tools: RateSource[] };
}

const MASK64 = (1n << 64n) - 1n;

/** SplitMix64: a tiny, well-mixed, seedable stream; `next()` is uniform on [0, 1) with 53 bits. */
export function splitMix64(seed: number): () => number {
  let state = BigInt(seed) & MASK64;
  return () => {
    state = (state + 0x9e3779b97f4a7c15n) & MASK64;
    let z = state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
    z ^= z >> 31n;
    return Number(z >> 11n) / 2 ** 53;
  };
}

function readConfig(config: MonteCarloConfig | undefined): Required<MonteCarloConfig> {
  if (config !== undefined && (config === null || typeof config !== "object" || Array.isArray(config)))
    throw new CarError("invalid_params", "config must be an object { trials?, seed?, default_success_rate?, retry_attempts? }");
  const c = config ?? {};
  for (const key of Object.keys(c)) {
    if (!Object.hasOwn(MONTE_CARLO_DEFAULTS, key)) throw new CarError("invalid_params", `config.${key.slice(0, 64)} is not a Monte Carlo setting`);
  }
  const int = (key: "trials" | "seed" | "retry_attempts", min: number, max: number): number => {
    const v = c[key] ?? MONTE_CARLO_DEFAULTS[key];
    if (!Number.isSafeInteger(v) || v < min || v > max) throw new CarError("invalid_params", `config.${key} must be an integer from ${min} to ${max}`);
    return v;
  };
  const rate = c.default_success_rate ?? MONTE_CARLO_DEFAULTS.default_success_rate;
  if (typeof rate !== "number" || !Number.isFinite(rate)) throw new CarError("invalid_params", "config.default_success_rate must be a number");
  return {
    trials: int("trials", 1, MAX_TRIALS),
    seed: int("seed", 0, Number.MAX_SAFE_INTEGER),
    retry_attempts: int("retry_attempts", 0, MAX_RETRY_ATTEMPTS),
    default_success_rate: clamp(rate),
  };
}

function clamp(rate: number): number {
  return Math.min(1, Math.max(0, rate));
}

/** Where each tool's rate comes from: the caller, the history (Laplace-smoothed), or the default. */
function rateTable(actions: readonly Action[], options: MonteCarloOptions, defaultRate: number): RateSource[] {
  const caller = options.toolSuccessRates ?? {};
  if (typeof caller !== "object" || caller === null || Array.isArray(caller)) throw new CarError("invalid_params", "tool_success_rates must be an object");
  const tools = new Set<string>();
  for (const a of actions) if (a.type === "tool_call" && a.tool !== undefined) tools.add(a.tool);
  for (const tool of Object.keys(caller)) {
    const r = caller[tool];
    if (typeof r !== "number" || !Number.isFinite(r)) throw new CarError("invalid_params", `tool_success_rates.${tool.slice(0, 64)} must be a number`);
    tools.add(tool);
  }
  return [...tools].sort().map((tool): RateSource => {
    const own = Object.hasOwn(caller, tool) ? caller[tool] : undefined;
    const seen = options.history?.get(tool);
    const counts = seen === undefined ? { succeeded: null, dispatched: null } : { succeeded: seen.succeeded, dispatched: seen.dispatched };
    if (own !== undefined) return { tool, rate: clamp(own), source: "caller", ...counts };
    if (seen !== undefined) return { tool, rate: (seen.succeeded + 1) / (seen.dispatched + 2), source: "trajectories", ...counts };
    return { tool, rate: defaultRate, source: "default", succeeded: null, dispatched: null };
  });
}

/** The goal conditions a simulated state cannot decide: they fail closed and are named. */
const UNDERIVABLE = new Set(["tool_receipts_grounded", "plan_achieved", "state_consistent", "command", "model_judge"]);
const OPERATORS = new Set(["eq", "neq", "gt", "lt", "gte", "lte", "exists", "not_exists", "contains"]);

type Goal = (state: ReadonlyMap<string, JsonValue>) => boolean;

/**
 * Reads a GoalCondition, serde's externally tagged form: `{ "state_predicate":
 * { key, operator, value? } }`, `{ "all_of": [..] }`, `{ "any_of": [..] }`, or
 * one of the conditions a simulation cannot decide (`"plan_achieved"`,
 * `{ "command": … }`, …), which evaluate false and are listed in `underivable`.
 * Anything else is `invalid_params`, not a goal silently never met.
 */
export function goalEvaluator(goal: JsonValue, underivable: Set<string>, path = "goal"): Goal {
  if (typeof goal === "string") {
    if (!UNDERIVABLE.has(goal)) throw new CarError("invalid_params", `${path}: unknown goal condition ${JSON.stringify(goal.slice(0, 64))}`);
    underivable.add(goal);
    return () => false;
  }
  if (!isJsonObject(goal) || Object.keys(goal).length !== 1) {
    throw new CarError("invalid_params", `${path} must be a GoalCondition: one of state_predicate, all_of, any_of (or a condition a simulation cannot decide)`);
  }
  const kind = Object.keys(goal)[0]!;
  const body = getOwn(goal, kind) as JsonValue;
  if (UNDERIVABLE.has(kind)) {
    underivable.add(kind);
    return () => false;
  }
  if (kind === "all_of" || kind === "any_of") {
    if (!Array.isArray(body)) throw new CarError("invalid_params", `${path}.${kind} must be an array of GoalConditions`);
    const parts = body.map((g, i) => goalEvaluator(g, underivable, `${path}.${kind}[${i}]`));
    return kind === "all_of" ? (s) => parts.every((p) => p(s)) : (s) => parts.some((p) => p(s));
  }
  if (kind !== "state_predicate") throw new CarError("invalid_params", `${path}: unknown goal condition ${JSON.stringify(kind.slice(0, 64))}`);
  if (!isJsonObject(body) || typeof body["key"] !== "string" || typeof body["operator"] !== "string" || !OPERATORS.has(body["operator"])) {
    throw new CarError("invalid_params", `${path}.state_predicate must be { key, operator (${[...OPERATORS].join(", ")}), value? }`);
  }
  const predicate: Precondition = { key: body["key"], operator: body["operator"], value: body["value"] ?? null, description: "" };
  return (s) => checkPrecondition(predicate, s) === undefined;
}

function distribution(values: number[]): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
  const sum = sorted.reduce((a, b) => a + b, 0);
  return { mean: sum / sorted.length, min: sorted[0]!, p50: rank(0.5), p95: rank(0.95), max: sorted[sorted.length - 1]! };
}

/** Samples `config.trials` rollouts of the proposal. Throws `invalid_proposal` for a graph that cannot be built, `invalid_params` for bad options. */
export function monteCarlo(input: VerifyInput, options: MonteCarloOptions = {}): MonteCarloResult {
  const config = readConfig(options.config);
  const { proposal, graph: built } = toParsed(input);
  const actions = proposal.actions;
  const graph = built ?? dependencyEdges(actions);
  const rates = rateTable(actions, options, config.default_success_rate);
  const rateOf = new Map(rates.map((r) => [r.tool, r.rate]));
  const underivable = new Set<string>();
  const goal = options.goal === undefined || options.goal === null ? undefined : goalEvaluator(options.goal, underivable);
  const initial = stateMap(options.state);
  const dataPreds = dataPredecessors(actions, graph);
  const effects = flatEffects(actions);
  const dependants = successors(actions.length, dataPreds);

  const n = actions.length;
  const rejected = new Float64Array(n);
  const failed = new Float64Array(n);
  const blast = new Float64Array(n);
  const toolCalls: number[] = [];
  const executed: number[] = [];
  const keyCounts = new Map<string, Map<string, { value: JsonValue; count: number }>>();
  let allLanded = 0;
  let goalReached = 0;
  const draw = splitMix64(config.seed);

  for (let t = 0; t < config.trials; t++) {
    let calls = 0;
    const walk = simulatedWalk(actions, graph, initial, dataPreds, effects, (i) => {
      const action = actions[i]!;
      if (action.type !== "tool_call") return true;
      const p = rateOf.get(action.tool ?? "") ?? config.default_success_rate;
      for (let attempt = 0; attempt <= config.retry_attempts; attempt++) {
        calls++;
        if (draw() < p) return true;
      }
      return false;
    });
    let ran = 0;
    let landedAll = true;
    for (let i = 0; i < n; i++) {
      const status = walk.skipped[i]!;
      if (status !== 1) ran++;
      if (status !== 0) landedAll = false;
      if (status === 1) rejected[i]!++;
      if (status === 2) {
        failed[i]!++;
        blast[i]! += rejectedDependants(i, dependants, walk.skipped);
      }
    }
    toolCalls.push(calls);
    executed.push(ran);
    if (landedAll) allLanded++;
    if (goal?.(walk.simulated) === true) goalReached++;
    walk.simulated.forEach((value, key) => {
      let values = keyCounts.get(key);
      if (values === undefined) keyCounts.set(key, (values = new Map()));
      const text = canonicalJson(value);
      const seen = values.get(text);
      if (seen === undefined) values.set(text, { value, count: 1 });
      else seen.count++;
    });
  }

  const trials = config.trials;
  const overridden = rates.filter((r) => r.source === "caller").map((r) => r.tool);
  return {
    trials,
    seed: config.seed,
    p_goal_reached: goal === undefined ? null : goalReached / trials,
    goal_underivable_conditions: [...underivable].sort(),
    p_all_effects_landed: allLanded / trials,
    tool_calls: distribution(toolCalls),
    actions_executed: distribution(executed),
    state_distribution: [...keyCounts.keys()].sort().map((key) => {
      const values = [...keyCounts.get(key)!.entries()]
        .sort(([ta, a], [tb, b]) => b.count - a.count || (ta < tb ? -1 : ta > tb ? 1 : 0))
        .map(([, v]) => ({ value: v.value, probability: v.count / trials }));
      return { key, p_present: values.reduce((s, v) => s + v.probability * trials, 0) / trials, values };
    }),
    action_outcomes: actions.map((a, i) => ({
      action_id: a.id,
      p_rejected: rejected[i]! / trials,
      p_failed: failed[i]! / trials,
      p_effects_landed: (trials - rejected[i]! - failed[i]!) / trials,
      mean_blast_radius: failed[i]! === 0 ? 0 : blast[i]! / failed[i]!,
    })),
    rate_provenance: {
      window_days: options.windowDays ?? 0,
      trajectories_available: options.history !== undefined && options.history.size > 0,
      overridden_by_caller: overridden,
      tools: rates,
    },
  };
}

/** Each action's data dependants, flat (the reverse of `dataPredecessors`). */
function successors(n: number, preds: { start: Int32Array; preds: ArrayLike<number> }): number[][] {
  const out: number[][] = Array.from({ length: n }, () => []);
  for (let i = 0; i < n; i++) for (let e = preds.start[i]!; e < preds.start[i + 1]!; e++) out[preds.preds[e]!]!.push(i);
  return out;
}

/** How many transitive dependants of `i` were rejected in this trial. */
function rejectedDependants(i: number, dependants: readonly number[][], status: Uint8Array): number {
  const seen = new Set<number>();
  const stack = [...dependants[i]!];
  while (stack.length > 0) {
    const j = stack.pop()!;
    if (seen.has(j) || status[j] !== 1) continue;
    seen.add(j);
    for (const k of dependants[j]!) stack.push(k);
  }
  return seen.size;
}
