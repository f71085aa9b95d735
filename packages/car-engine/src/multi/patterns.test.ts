import { describe, expect, it } from "vitest";
import { fakeEnv, output, scripted, slow, spec } from "../../test/multi/agents.ts";
import { runMapReduce, runPipeline, runSwarm, runVote } from "./index.ts";

describe("runPipeline", () => {
  it("feeds each stage's answer to the next and ends with the last stage's answer", async () => {
    const { options } = fakeEnv();
    const agent = scripted({
      gather: () => output("gather", "requirements: dedupe by id"),
      design: (task) => output("design", `design from <${task.split("\n").pop()!}>`),
      critic: (_task, ctx) => output("critic", `critique of ${ctx.inputs[0]!.name}`),
    });
    const result = await runPipeline([spec("gather"), spec("design"), spec("critic")], "Build dedupe.", agent, options);
    expect(agent.calls[0]!.task).toBe("Build dedupe.");
    expect(agent.calls[1]!.task).toBe("Build dedupe.\n\nOutput of the previous stage:\n[gather]\nrequirements: dedupe by id");
    expect(agent.calls[1]!.ctx.inputs).toEqual([{ name: "gather", answer: "requirements: dedupe by id" }]);
    expect(result.stages.map((s) => s.answer)).toEqual(["requirements: dedupe by id", "design from <requirements: dedupe by id>", "critique of design"]);
    expect(result.completed).toBe(true);
    expect(result.final_answer).toBe("critique of design");
  });

  it("stops at a failed stage and reports the later stages as cut off", async () => {
    const { options } = fakeEnv();
    const agent = scripted({ scraper: () => output("scraper", "", "timeout fetching page") });
    const result = await runPipeline([spec("scraper"), spec("summarizer"), spec("writer")], "t", agent, options);
    expect(agent.calls.map((c) => c.name)).toEqual(["scraper"]);
    expect(result.stages.map((s) => [s.name, s.error])).toEqual([
      ["scraper", "timeout fetching page"],
      ["summarizer", "not started: stage 1 (scraper) did not produce an answer"],
      ["writer", "not started: stage 1 (scraper) did not produce an answer"],
    ]);
    expect(result.cut_off.map((c) => [c.name, c.reason])).toEqual([
      ["summarizer", "upstream_failed"],
      ["writer", "upstream_failed"],
    ]);
    expect(result.completed).toBe(false);
    expect(result.final_answer).toBeNull();
  });

  it("has no answer for an empty pipeline", async () => {
    const result = await runPipeline([], "t", scripted(), fakeEnv().options);
    expect(result).toMatchObject({ stages: [], completed: false, final_answer: null, agent_calls: 0 });
  });
});

describe("runSwarm", () => {
  it("parallel: every agent gets the task; without a synthesizer the answers are labelled", async () => {
    const { options } = fakeEnv();
    const agent = scripted();
    const result = await runSwarm("parallel", [spec("researcher"), spec("critic")], "Move deploy before test?", agent, options);
    expect(agent.calls.map((c) => c.task)).toEqual(["Move deploy before test?", "Move deploy before test?"]);
    expect(result.rounds).toHaveLength(1);
    expect(result.final_answer).toBe("[researcher]\nresearcher: Move deploy before test?\n\n[critic]\ncritic: Move deploy before test?");
    expect(result.synthesis).toBeNull();
  });

  it("sequential: each agent sees the successful answers before it; the last answer is final", async () => {
    const { options } = fakeEnv();
    const agent = scripted({
      a: () => output("a", "A"),
      b: () => output("b", "", "failed"),
      c: (_t, ctx) => output("c", `C after ${ctx.inputs.map((i) => i.name).join("+")}`),
    });
    const result = await runSwarm("sequential", [spec("a"), spec("b"), spec("c")], "t", agent, options);
    expect(agent.calls[1]!.task).toBe("t\n\nAnswers so far:\n[a]\nA");
    expect(agent.calls[2]!.task).toBe("t\n\nAnswers so far:\n[a]\nA");
    expect(result.final_answer).toBe("C after a");
  });

  it("debate: in each later round every agent sees the others' previous answers, not its own", async () => {
    const { options } = fakeEnv();
    const agent = scripted({
      pro: (_t, ctx) => output("pro", `pro@${ctx.step} saw [${ctx.inputs.map((i) => i.answer).join("|")}]`),
      con: (_t, ctx) => output("con", `con@${ctx.step} saw [${ctx.inputs.map((i) => i.answer).join("|")}]`),
      judge: (_t, ctx) => output("judge", `verdict over ${ctx.inputs.length} answers`),
    });
    const result = await runSwarm("debate", [spec("pro"), spec("con")], "t", agent, { ...options, rounds: 3, synthesizer: spec("judge") });
    expect(result.rounds.map((r) => r.map((o) => o.answer))).toEqual([
      ["pro@round 1 saw []", "con@round 1 saw []"],
      ["pro@round 2 saw [con@round 1 saw []]", "con@round 2 saw [pro@round 1 saw []]"],
      ["pro@round 3 saw [con@round 2 saw [pro@round 1 saw []]]", "con@round 3 saw [pro@round 2 saw [con@round 1 saw []]]"],
    ]);
    expect(agent.calls[2]!.task).toBe("t\n\nThe other agents' answers in round 1:\n[con]\ncon@round 1 saw []");
    expect(result.outputs).toEqual(result.rounds[2]);
    expect(result.synthesis!.answer).toBe("verdict over 2 answers");
    expect(result.final_answer).toBe("verdict over 2 answers");
    expect(result.agent_calls).toBe(7);
  });

  it("debate defaults to two rounds and rejects rounds for other modes", async () => {
    const { options } = fakeEnv();
    const result = await runSwarm("debate", [spec("a"), spec("b")], "t", scripted(), options);
    expect(result.rounds).toHaveLength(2);
    await expect(runSwarm("parallel", [spec("a")], "t", scripted(), { ...options, rounds: 2 })).rejects.toThrow(/debate mode only/);
    await expect(runSwarm("debate", [spec("a")], "t", scripted(), { ...options, rounds: 0 })).rejects.toThrow(/positive integer/);
  });

  it("falls back to the agents' answers when the synthesizer fails", async () => {
    const { options } = fakeEnv();
    const agent = scripted({ synth: () => output("synth", "", "model overloaded") });
    const result = await runSwarm("parallel", [spec("a"), spec("b")], "t", agent, { ...options, synthesizer: spec("synth") });
    expect(result.synthesis!.error).toBe("model overloaded");
    expect(result.final_answer).toBe("[a]\na: t\n\n[b]\nb: t");
  });

  it("skips the synthesizer when no agent answered", async () => {
    const { options } = fakeEnv();
    const agent = scripted({ a: () => output("a", "", "down") });
    const result = await runSwarm("parallel", [spec("a")], "t", agent, { ...options, synthesizer: spec("synth") });
    expect(agent.calls.map((c) => c.name)).toEqual(["a"]);
    expect(result.cut_off).toEqual([{ name: "synth", step: "synthesize", reason: "upstream_failed", detail: "no agent produced an answer to synthesise" }]);
    expect(result.final_answer).toBeNull();
  });
});

describe("runMapReduce", () => {
  it("maps every item, in item order, within the concurrency limit, then reduces", async () => {
    const { options, timers } = fakeEnv({ maxConcurrency: 2 });
    const agent = scripted({
      classifier: async (task, ctx, s) => {
        const item = task.split("\n").pop()!;
        return slow(timers, item.length, `label(${item})`)(task, ctx, s);
      },
      aggregator: (_t, ctx) => output("aggregator", ctx.inputs.map((i) => `${i.name}=${i.answer}`).join("; ")),
    });
    const items = ["ticket AAAA", "ticket B", "ticket CCCCCCC", "ticket DD"];
    const result = await timers.settle(runMapReduce(spec("classifier"), spec("aggregator"), "Label tickets.", items, agent, options));
    expect(agent.maxInFlight).toBe(2);
    expect(agent.calls[0]!.task).toBe("Label tickets.\n\nItem 1 of 4:\nticket AAAA");
    expect(result.map.map((m) => m.answer)).toEqual(items.map((i) => `label(${i})`));
    expect(result.final_answer).toBe("item 1=label(ticket AAAA); item 2=label(ticket B); item 3=label(ticket CCCCCCC); item 4=label(ticket DD)");
  });

  it("reduces what was mapped and tells the reducer which items failed", async () => {
    const { options } = fakeEnv();
    const agent = scripted({
      mapper: (task) => (task.endsWith("bad") ? output("mapper", "", "cannot parse") : output("mapper", task.split("\n").pop()!.toUpperCase())),
    });
    const result = await runMapReduce(spec("mapper"), spec("reducer"), "t", ["x", "bad", "y"], agent, options);
    expect(result.map.map((m) => m.error)).toEqual([null, "cannot parse", null]);
    expect(agent.calls[3]!.task).toBe("t\n\nMapped items:\n[item 1]\nX\n\n[item 3]\nY\n\nItems that could not be mapped: 2");
    expect(result.failed_calls).toBe(1);
  });

  it("falls back to the mapped answers when the reducer fails, and skips it when nothing was mapped", async () => {
    const { options } = fakeEnv();
    const failingReducer = scripted({ reducer: () => output("reducer", "", "down") });
    const partial = await runMapReduce(spec("mapper"), spec("reducer"), "t", ["a"], failingReducer, options);
    expect(partial.final_answer).toBe("[item 1]\nmapper: t\n\nItem 1 of 1:\na");
    const empty = await runMapReduce(spec("mapper"), spec("reducer"), "t", [], scripted(), options);
    expect(empty.reduce.error).toBe("not started: there are no items to reduce");
    expect(empty.final_answer).toBeNull();
    await expect(runMapReduce(spec("m"), spec("r"), "t", [1] as never, scripted(), options)).rejects.toThrow(/array of strings/);
  });
});

describe("runVote", () => {
  const answering = (answers: Record<string, string | null>) =>
    scripted(Object.fromEntries(Object.entries(answers).map(([name, a]) => [name, () => (a === null ? output(name, "", "failed") : output(name, a))])));

  it("picks the majority, counting answers equal up to case and whitespace", async () => {
    const { options } = fakeEnv();
    const agent = answering({ a: "Yes", b: "no", c: "  yes ", d: "YES" });
    const result = await runVote([spec("a"), spec("b"), spec("c"), spec("d")], "Will it corrupt rows?", agent, options);
    expect(result.tally).toEqual([
      { answer: "Yes", count: 3, voters: ["a", "c", "d"] },
      { answer: "no", count: 1, voters: ["b"] },
    ]);
    expect(result).toMatchObject({ majority: true, tie: false, final_answer: "Yes" });
  });

  it("breaks a tie in favour of the answer whose first voter comes first; failed agents do not vote", async () => {
    const { options } = fakeEnv();
    const agent = answering({ a: "blue", b: "red", c: "red", d: "blue", e: null });
    const result = await runVote(
      ["a", "b", "c", "d", "e"].map((n) => spec(n)),
      "t",
      agent,
      options,
    );
    expect(result.winner).toEqual({ answer: "blue", count: 2, voters: ["a", "d"] });
    expect(result).toMatchObject({ tie: true, majority: false, final_answer: "blue", failed_calls: 1 });
  });

  it("a plurality is not a majority", async () => {
    const { options } = fakeEnv();
    const result = await runVote(
      ["a", "b", "c", "d"].map((n) => spec(n)),
      "t",
      answering({ a: "x", b: "x", c: "y", d: "z" }),
      options,
    );
    expect(result).toMatchObject({ majority: false, tie: false, final_answer: "x" });
  });

  it("lets a synthesizer write the final answer from the tally, and keeps the winner if it fails", async () => {
    const { options } = fakeEnv();
    const agent = scripted({
      a: () => output("a", "x"),
      b: () => output("b", "y"),
      c: () => output("c", "x"),
      judge: (task) => output("judge", `judged: ${task.split("\n").slice(2).join(" | ")}`),
    });
    const result = await runVote([spec("a"), spec("b"), spec("c")], "t", agent, { ...options, synthesizer: spec("judge") });
    expect(result.final_answer).toBe("judged: Answers and their votes: | [2 votes: a, c] | x |  | [1 vote: b] | y");
    const failing = scripted({ judge: () => output("judge", "", "down"), a: () => output("a", "x") });
    const fallback = await runVote([spec("a")], "t", failing, { ...options, synthesizer: spec("judge") });
    expect(fallback.final_answer).toBe("x");
  });

  it("has no winner when nobody answers", async () => {
    const { options } = fakeEnv();
    const result = await runVote([spec("a")], "t", answering({ a: null }), options);
    expect(result).toMatchObject({ winner: null, majority: false, tie: false, final_answer: null, tally: [] });
  });
});
