/**
 * What a run has spent — tool calls dispatched, retries, time since it
 * started — and the run-time half of its CostBudget, checked before each
 * action starts and before each retry. (The static half, `max_actions` and
 * the declared tool calls, is decided at admission.)
 */
import type { Action, Clock, CostBudget } from "@car/ir";

export class CostMeter {
  toolCalls = 0;
  retries = 0;
  startMs = 0;
  readonly #budget: CostBudget | undefined;
  readonly #clock: Clock;

  constructor(budget: CostBudget | undefined, clock: Clock) {
    this.#budget = budget;
    this.#clock = clock;
  }

  start(): void {
    this.startMs = this.#clock.now();
  }

  /** Why `action` may not start within the budget; undefined when it may. */
  exceeded(action: Action): string | undefined {
    const budget = this.#budget;
    if (budget === undefined) return undefined;
    if (budget.max_duration_ms !== undefined && this.#clock.now() - this.startMs > budget.max_duration_ms) {
      return `budget exceeded: the proposal ran longer than ${budget.max_duration_ms} ms`;
    }
    if (action.type === "tool_call" && budget.max_tool_calls !== undefined && this.toolCalls >= budget.max_tool_calls) {
      return `budget exceeded: ${this.toolCalls} tool calls made, the budget allows ${budget.max_tool_calls}`;
    }
    return undefined;
  }
}
