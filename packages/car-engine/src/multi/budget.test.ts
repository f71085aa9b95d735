/**
 * BudgetLimits' token and cost ceilings: counted from each AgentOutput's
 * `tokens`, enforced between agents, reported in the result and the events,
 * and refused up front when a limit is not one the runtime can count.
 */
import { isCarError } from "@car/ir";
import type { AgentOutput } from "@car/ir";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fakeEnv, output, scripted, spec } from "../../test/multi/agents.ts";
import { costByAgent, metricsSummary } from "../events/metrics.ts";
import { MULTI_EVENT_KINDS, parseBudget, runPipeline, runSwarm } from "./index.ts";

/** An answer that reports its usage. */
function metered(name: string, input_tokens: number, output_tokens: number, cost_usd?: number): AgentOutput {
  return { ...output(name, `${name} done`), tokens: { input_tokens, output_tokens, ...(cost_usd === undefined ? {} : { cost_usd }) } };
}

const names = ["a", "b", "c", "d"];

describe("token and cost ceilings", () => {
  it("max_total_tokens stops further agents with a budget_exceeded cut-off", async () => {
    const { options, events } = fakeEnv({ budget: { max_total_tokens: 150 } });
    const agent = scripted(Object.fromEntries(names.map((n) => [n, () => metered(n, 60, 40)])));
    const result = await runSwarm(
      "sequential",
      names.map((n) => spec(n)),
      "t",
      agent,
      options,
    );

    // a spends 100 (< 150), b brings it to 200 (>= 150): c and d never start.
    expect(agent.calls.map((c) => c.name)).toEqual(["a", "b"]);
    expect(result.agent_calls).toBe(2);
    expect(result.outputs.slice(2).map((o) => o.error)).toEqual([expect.stringMatching(/max_total_tokens/), expect.stringMatching(/max_total_tokens/)]);
    expect(result.cut_off.map((c) => [c.name, c.reason])).toEqual([
      ["c", "budget_exceeded"],
      ["d", "budget_exceeded"],
    ]);
    expect(result.budget_exceeded).toEqual({ limit: "max_total_tokens", threshold: 150, spent: 200 });
    expect(result.usage).toEqual({ input_tokens: 120, output_tokens: 80, total_tokens: 200, cost_usd: 0, unmetered_calls: 0 });

    const costs = costByAgent(events.query());
    expect(costs).toEqual([
      { agent: "a", calls: 1, tokens_in: 60, tokens_out: 40, cost_usd: 0 },
      { agent: "b", calls: 1, tokens_in: 60, tokens_out: 40, cost_usd: 0 },
    ]);
    expect(metricsSummary(events.query())).toMatchObject({ tokens_in: 120, tokens_out: 80 });
  });

  it("each of the four ceilings trips on its own count", async () => {
    const cases = [
      { budget: { max_input_tokens: 10 }, limit: "max_input_tokens", spent: 10 },
      { budget: { max_output_tokens: 5 }, limit: "max_output_tokens", spent: 20 },
      { budget: { max_cost_usd: 0.01 }, limit: "max_cost_usd", spent: 0.02 },
    ];
    for (const c of cases) {
      const { options } = fakeEnv({ budget: c.budget });
      const agent = scripted(Object.fromEntries(names.map((n) => [n, () => metered(n, 10, 20, 0.02)])));
      const result = await runPipeline(
        names.map((n) => spec(n)),
        "t",
        agent,
        options,
      );
      expect(agent.calls).toHaveLength(1);
      expect(result.budget_exceeded).toMatchObject({ limit: c.limit, spent: c.spent });
      // The refused stage breaks the pipeline: the stages after it are upstream failures.
      expect(result.cut_off.map((x) => x.reason)).toEqual(["budget_exceeded", "upstream_failed", "upstream_failed"]);
    }
  });

  it("an agent that reports no usage under a token ceiling stops the run: its spend cannot be counted", async () => {
    const { options } = fakeEnv({ budget: { max_total_tokens: 1_000_000 } });
    const agent = scripted({ a: () => output("a", "silent"), b: () => metered("b", 1, 1) });
    const result = await runPipeline([spec("a"), spec("b")], "t", agent, options);
    expect(agent.calls).toHaveLength(1);
    expect(result.stages[0]!.error).toBeNull();
    expect(result.budget_exceeded).toMatchObject({ limit: "max_total_tokens", spent: null });
    expect(result.usage.unmetered_calls).toBe(1);
    expect(result.cut_off[0]!.detail).toMatch(/reported no token usage/);
  });

  it("without a token ceiling, reported usage is still counted and put on the events", async () => {
    const { options, events } = fakeEnv();
    const agent = scripted({ a: () => metered("a", 3, 4, 0.5) });
    const result = await runPipeline([spec("a")], "t", agent, options);
    expect(result.usage).toEqual({ input_tokens: 3, output_tokens: 4, total_tokens: 7, cost_usd: 0.5, unmetered_calls: 0 });
    expect(result.budget_exceeded).toBeNull();
    const finished = events.query({ kinds: [MULTI_EVENT_KINDS.agentFinished] })[0]!;
    expect(finished.data).toMatchObject({ tokens_in: 3, tokens_out: 4, cost_usd: 0.5 });
    expect(metricsSummary(events.query())).toMatchObject({ tokens_in: 3, tokens_out: 4, cost_usd: 0.5, cumulative_cost_usd: 0.5 });
  });

  it("malformed usage is the agent's error, not a silent zero", async () => {
    const { options } = fakeEnv();
    const agent = scripted({ a: () => ({ ...output("a", "x"), tokens: { input_tokens: -1, output_tokens: 2 } }) as never });
    const result = await runPipeline([spec("a")], "t", agent, options);
    expect(result.stages[0]!.error).toMatch(/tokens.input_tokens/);
  });
});

describe("a limit the runtime cannot enforce is refused", () => {
  it.each([
    [{ max_tool_calls: 3 }, /max_tool_calls/],
    [{ max_total_token: 3 }, /max_total_token.*max_total_tokens/],
    [{ max_total_tokens: -1 }, /max_total_tokens/],
    [{ max_cost_usd: "1" }, /max_cost_usd/],
    [{ max_cost_usd: Number.NaN }, /max_cost_usd/],
    [{ max_input_tokens: 1.5 }, /max_input_tokens/],
    ["lots", /budget/],
  ])("%j", async (budget, message) => {
    const { options } = fakeEnv({ budget: budget as never });
    const agent = scripted();
    const error = await runPipeline([spec("a")], "t", agent, options).catch((e: unknown) => e);
    expect(isCarError(error, "invalid_params")).toBe(true);
    expect((error as Error).message).toMatch(message);
    expect(agent.calls).toHaveLength(0);
  });
});

describe("budget accounting holds for any spend", () => {
  it("a sequential run starts exactly the agents before the first crossing, and sums exactly what was reported", async () => {
    const usage = fc.record({ input: fc.integer({ min: 0, max: 50 }), output: fc.integer({ min: 0, max: 50 }), cents: fc.integer({ min: 0, max: 30 }) });
    await fc.assert(
      fc.asyncProperty(
        fc.array(usage, { minLength: 1, maxLength: 8 }),
        fc.record(
          {
            max_input_tokens: fc.integer({ min: 0, max: 200 }),
            max_output_tokens: fc.integer({ min: 0, max: 200 }),
            max_total_tokens: fc.integer({ min: 0, max: 300 }),
            max_cost_usd: fc.integer({ min: 0, max: 100 }).map((c) => c / 100),
          },
          { requiredKeys: [] },
        ),
        async (spends, budget) => {
          const { options } = fakeEnv({ budget });
          const agentNames = spends.map((_, i) => `agent${i}`);
          const agent = scripted(Object.fromEntries(spends.map((s, i) => [agentNames[i]!, () => metered(agentNames[i]!, s.input, s.output, s.cents / 100)])));
          const result = await runSwarm(
            "sequential",
            agentNames.map((n) => spec(n)),
            "t",
            agent,
            options,
          );

          // The model: before each start, refuse when any limit is already reached.
          let input = 0;
          let out = 0;
          let cents = 0;
          let started = 0;
          const reached = (): boolean =>
            (budget.max_input_tokens !== undefined && input >= budget.max_input_tokens) ||
            (budget.max_output_tokens !== undefined && out >= budget.max_output_tokens) ||
            (budget.max_total_tokens !== undefined && input + out >= budget.max_total_tokens) ||
            (budget.max_cost_usd !== undefined && cents / 100 >= budget.max_cost_usd);
          for (const s of spends) {
            if (reached()) break;
            started++;
            input += s.input;
            out += s.output;
            cents += s.cents;
          }
          expect(result.agent_calls).toBe(started);
          expect(result.usage.input_tokens).toBe(input);
          expect(result.usage.output_tokens).toBe(out);
          expect(result.usage.total_tokens).toBe(input + out);
          expect(result.usage.cost_usd).toBeCloseTo(cents / 100, 9);
          expect(result.budget_exceeded !== null).toBe(reached());
          expect(result.cut_off.every((c) => c.reason === "budget_exceeded")).toBe(true);
          expect(result.cut_off).toHaveLength(spends.length - started);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("parseBudget takes any value", () => {
  it("answers limits or throws invalid_params, never anything else", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.anything(), fc.dictionary(fc.constantFrom("max_agents", "max_total_tokens", "max_cost_usd", "max_duration_ms", "bogus"), fc.anything())),
        (value) => {
          try {
            const limits = parseBudget(value);
            for (const v of Object.values(limits)) expect(typeof v === "number" && v >= 0).toBe(true);
          } catch (error) {
            expect(isCarError(error, "invalid_params")).toBe(true);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
