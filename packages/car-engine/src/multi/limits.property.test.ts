import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fakeEnv, output, scripted, spec } from "../../test/multi/agents.ts";
import { sleep } from "@car/ir";
import { MULTI_EVENT_KINDS, runSwarm } from "./index.ts";
import type { SwarmMode } from "./index.ts";

const agentCase = fc.record({ ms: fc.integer({ min: 0, max: 60 }), fails: fc.boolean() });

describe("limits hold for any mix of agents", () => {
  it("never exceeds maxConcurrency or max_agents, accounts for every call, and leaves no timer", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(agentCase, { minLength: 1, maxLength: 10 }),
        fc.constantFrom<SwarmMode>("parallel", "sequential", "debate"),
        fc.integer({ min: 0, max: 4 }),
        fc.option(fc.integer({ min: 0, max: 12 }), { nil: undefined }),
        fc.option(fc.integer({ min: 1, max: 50 }), { nil: undefined }),
        async (cases, mode, maxConcurrency, maxAgents, timeout) => {
          const { options, timers, events } = fakeEnv({
            maxConcurrency,
            ...(maxAgents === undefined ? {} : { budget: { max_agents: maxAgents } }),
            ...(timeout === undefined ? {} : { agentTimeoutMs: timeout }),
          });
          const names = cases.map((_, i) => `agent${i}`);
          const agent = scripted(
            Object.fromEntries(
              cases.map((c, i) => [
                names[i]!,
                async (_task: string, ctx: { signal: AbortSignal }) => {
                  await sleep(timers, c.ms, ctx.signal);
                  return output(names[i]!, c.fails ? "" : "ok", c.fails ? "failed" : null);
                },
              ]),
            ),
          );
          const result = await timers.settle(
            runSwarm(
              mode,
              names.map((n) => spec(n)),
              "t",
              agent,
              options,
            ),
          );

          if (maxConcurrency > 0) expect(agent.maxInFlight).toBeLessThanOrEqual(maxConcurrency);
          if (maxAgents !== undefined) expect(result.agent_calls).toBeLessThanOrEqual(maxAgents);
          expect(result.agent_calls).toBe(agent.calls.length);
          expect(result.outputs).toHaveLength(cases.length);
          const count = (kind: string): number => events.count({ kinds: [kind], proposal_id: result.run_id });
          expect(count(MULTI_EVENT_KINDS.agentStarted)).toBe(result.agent_calls);
          expect(count(MULTI_EVENT_KINDS.agentFinished) + count(MULTI_EVENT_KINDS.agentFailed)).toBe(result.agent_calls);
          expect(count(MULTI_EVENT_KINDS.agentFailed)).toBe(result.failed_calls);
          expect(count(MULTI_EVENT_KINDS.agentSkipped)).toBe(result.cut_off.filter((c) => c.call_id === undefined).length);
          for (const out of result.outputs) {
            const c = cases[names.indexOf(out.name)]!;
            if (out.error === null) expect(c.fails).toBe(false);
          }
          expect(timers.pending()).toBe(0);
        },
      ),
      { numRuns: 150 },
    );
  });
});
