import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isCarError } from "@car/ir";
import { fakeEnv, output, scripted, spec } from "../../test/multi/agents.ts";
import { readVerdict, runTournament } from "./index.ts";

/** Competitors answer their own strength; the judge picks the larger number, so the strongest must win. */
function strengthAgents(strengths: readonly number[], judge: (a: number, b: number) => string = (a, b) => (a >= b ? '{"winner": "A"}' : '{"winner": "B"}')) {
  return scripted({
    ...Object.fromEntries(strengths.map((s, i) => [`c${i}`, () => output(`c${i}`, String(s))])),
    judge: (task) => {
      const [a, b] = [...task.matchAll(/^\[(?:A|B)\]\n(.*)$/gm)].map((m) => Number(m[1]));
      return output("judge", judge(a!, b!));
    },
  });
}

describe("runTournament", () => {
  it("runs a single-elimination bracket with a bye and ranks best to worst by elimination round", async () => {
    const { options } = fakeEnv();
    const agent = strengthAgents([3, 9, 5, 1, 7]);
    const result = await runTournament(
      [0, 1, 2, 3, 4].map((i) => spec(`c${i}`)),
      spec("judge"),
      "pick",
      agent,
      options,
    );
    // Round 1: c0–c1 → c1, c2–c3 → c2, c4 bye. Round 2: c1–c2 → c1, c4 bye. Round 3: c1–c4 → c1.
    expect(result.matches.map((m) => [m.round, m.a, m.b, m.winner, m.decided_by])).toEqual([
      [1, "c0", "c1", "c1", "judge"],
      [1, "c2", "c3", "c2", "judge"],
      [2, "c1", "c2", "c1", "judge"],
      [3, "c1", "c4", "c1", "judge"],
    ]);
    expect(result.byes).toEqual([
      { round: 1, name: "c4" },
      { round: 2, name: "c4" },
    ]);
    expect(result.ranking).toEqual(["c1", "c4", "c2", "c0", "c3"]);
    expect(result).toMatchObject({ winner_name: "c1", winner_answer: "9", final_answer: "9" });
    // A fresh judge call per match, each seeing only its two answers.
    expect(agent.calls.filter((c) => c.name === "judge")).toHaveLength(4);
    expect(agent.calls.filter((c) => c.name === "judge").map((c) => c.ctx.inputs.map((i) => i.name))).toEqual(Array(4).fill(["A", "B"]));
  });

  it("leaves failed competitors out of the bracket and falls back to A when the judge gives no verdict", async () => {
    const { options } = fakeEnv();
    const agent = scripted({
      c0: () => output("c0", "x"),
      c1: () => output("c1", "", "model down"),
      c2: () => output("c2", "y"),
      judge: () => output("judge", "they are both fine"),
    });
    const result = await runTournament([spec("c0"), spec("c1"), spec("c2")], spec("judge"), "t", agent, options);
    expect(result.matches).toHaveLength(1);
    expect(result.matches[0]).toMatchObject({ a: "c0", b: "c2", winner: "c0", decided_by: "fallback" });
    expect(result.ranking).toEqual(["c0", "c2", "c1"]);
  });

  it("has no winner when no competitor answers, and refuses bad input", async () => {
    const { options } = fakeEnv();
    const agent = scripted({ c0: () => output("c0", "", "down") });
    const result = await runTournament([spec("c0")], spec("judge"), "t", agent, options);
    expect(result).toMatchObject({ winner_name: null, winner_answer: null, ranking: ["c0"], matches: [] });
    for (const competitors of [[], [spec("a"), spec("a")]]) {
      const error = await runTournament(competitors, spec("judge"), "t", agent, options).catch((e: unknown) => e);
      expect(isCarError(error, "invalid_params")).toBe(true);
    }
  });

  it("reads the judge's verdict", () => {
    expect(readVerdict("A")).toBe("A");
    expect(readVerdict(" **b**. ")).toBe("B");
    expect(readVerdict('Reasoning...\n```json\n{"winner": "B"}\n```')).toBe("B");
    expect(readVerdict("Both answers are good")).toBeUndefined();
  });

  it("for any field, the strongest wins, every competitor is ranked once, and n-1 matches are played", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 12 }), async (strengths) => {
        const { options } = fakeEnv();
        const agent = strengthAgents(strengths);
        const result = await runTournament(
          strengths.map((_, i) => spec(`c${i}`)),
          spec("judge"),
          "t",
          agent,
          options,
        );
        const best = strengths.indexOf(Math.max(...strengths));
        expect(result.winner_name).toBe(`c${best}`);
        expect([...result.ranking].sort()).toEqual(strengths.map((_, i) => `c${i}`).sort());
        expect(result.matches).toHaveLength(strengths.length - 1);
        // Ranking is by elimination round: a competitor who lost later ranks above one who lost earlier.
        const lostIn = new Map(result.matches.map((m) => [m.loser, m.round]));
        for (let i = 2; i < result.ranking.length; i++) expect(lostIn.get(result.ranking[i - 1]!)!).toBeGreaterThanOrEqual(lostIn.get(result.ranking[i]!)!);
        // Each match's winner is the stronger of its two.
        for (const m of result.matches) expect(strengths[Number(m.winner.slice(1))]!).toBeGreaterThan(strengths[Number(m.loser.slice(1))]!);
      }),
      { numRuns: 100 },
    );
  });

  it("a budget that runs out mid-bracket still ends with a winner (the judge falls back)", async () => {
    const { options } = fakeEnv({ budget: { max_agents: 5 } });
    const agent = strengthAgents([1, 2, 3, 4]);
    const result = await runTournament(
      [0, 1, 2, 3].map((i) => spec(`c${i}`)),
      spec("judge"),
      "t",
      agent,
      options,
    );
    expect(result.agent_calls).toBe(5);
    expect(result.matches.map((m) => m.decided_by)).toEqual(["judge", "fallback", "fallback"]);
    expect(result.winner_name).not.toBeNull();
    expect(result.cut_off.map((c) => c.reason)).toEqual(["max_agents", "max_agents"]);
  });
});
