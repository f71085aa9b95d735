/**
 * `rate_limit_tool`: a sliding-window cap on calls to one tool, per rule
 * instance (so per engine). A slot is taken when the call is admitted by this
 * rule — even if another rule then denies it, because the engine evaluates
 * every rule — and a call this rule refuses takes none, so a caller retrying
 * into a full window gets in as soon as the oldest admission ages out.
 */
import { type Action, type Clock, systemClock } from "@car/ir";
import type { PolicyRule } from "../engine.ts";

export function rateLimitToolRule(tool: string, maxCalls: number, intervalSecs: number, clock: Clock = systemClock): PolicyRule {
  const windowMs = intervalSecs * 1000;
  const admitted: number[] = [];
  const reason = `tool '${tool}' exceeded ${maxCalls} call(s) within ${intervalSecs}s`;
  return {
    name: `rate_limit_tool:${tool}`,
    tool,
    evaluate(action: Action) {
      if (action.tool !== tool) return undefined;
      const now = clock.now();
      while (admitted.length > 0 && (admitted[0] as number) <= now - windowMs) admitted.shift();
      if (admitted.length >= maxCalls) return reason;
      admitted.push(now);
      return undefined;
    },
  };
}
