import { describe, expect, it } from "vitest";
import { fakeEnv, output, scripted, spec } from "../../test/multi/agents.ts";
import type { AgentCallContext } from "./index.ts";
import { readSupervisorAnswer, runSupervisor } from "./index.ts";

/** A supervisor that answers round by round from a script. */
function lead(replies: string[]): (task: string, ctx: AgentCallContext) => ReturnType<typeof output> {
  let round = 0;
  return () => output("lead", replies[round++] ?? "out of script");
}

describe("readSupervisorAnswer", () => {
  it("reads a delegation or a final answer from the whole answer, a fenced block or embedded JSON", () => {
    expect(readSupervisorAnswer('{"delegate":[{"worker":"coder","task":"write it"}]}')).toEqual({
      kind: "delegate",
      delegations: [{ worker: "coder", task: "write it" }],
    });
    expect(readSupervisorAnswer('Plan:\n```json\n{"final_answer": "done"}\n```\nthanks')).toEqual({ kind: "final", answer: "done" });
    expect(readSupervisorAnswer('I will delegate: {"delegate": [{"worker": "a", "task": "x"}]} ok')).toEqual({
      kind: "delegate",
      delegations: [{ worker: "a", task: "x" }],
    });
    expect(readSupervisorAnswer('{"final_answer": "f", "delegate": [{"worker": "a", "task": "x"}]}')).toEqual({ kind: "final", answer: "f" });
  });

  it("calls anything else unstructured", () => {
    for (const text of [
      "just an answer",
      '{"delegate": []}',
      '{"delegate": [{"worker": 1, "task": "x"}]}',
      '{"delegate": "coder"}',
      "{broken json",
      '["final_answer"]',
      '{"__proto__": {"final_answer": "x"}}',
    ]) {
      expect(readSupervisorAnswer(text)).toEqual({ kind: "unstructured", text });
    }
  });
});

describe("runSupervisor", () => {
  it("delegates over rounds, shows the supervisor every result so far, and ends on its final answer", async () => {
    const { options } = fakeEnv();
    const agent = scripted({
      lead: lead([
        '{"delegate": [{"worker": "coder", "task": "implement binary search"}]}',
        '{"delegate": [{"worker": "tester", "task": "test it"}, {"worker": "coder", "task": "fix edge case"}]}',
        '{"final_answer": "binary search, implemented and verified"}',
      ]),
      coder: (task) => output("coder", `code for ${task}`),
      tester: () => output("tester", "all tests pass"),
    });
    const result = await runSupervisor(
      [spec("coder", "implement"), spec("tester", "verify")],
      spec("lead"),
      "Implement and verify a binary search.",
      agent,
      options,
    );

    expect(result.rounds.map((r) => [r.decision, r.delegations.map((d) => `${d.worker}:${d.output.answer}`)])).toEqual([
      ["delegate", ["coder:code for implement binary search"]],
      ["delegate", ["tester:all tests pass", "coder:code for fix edge case"]],
      ["final", []],
    ]);
    expect(result.completed).toBe(true);
    expect(result.final_answer).toBe("binary search, implemented and verified");
    const firstBrief = agent.calls[0]!.task;
    expect(firstBrief).toContain("Implement and verify a binary search.\n\nWorkers:\n- coder: implement\n- tester: verify");
    expect(firstBrief).toContain('{"delegate": [{"worker": "<worker name>", "task": "<subtask>"}]}');
    const thirdBrief = agent.calls.filter((c) => c.name === "lead")[2]!.task;
    expect(thirdBrief).toContain("[coder] task: implement binary search\ncode for implement binary search");
    expect(thirdBrief).toContain("[tester] task: test it\nall tests pass");
    expect(agent.calls.filter((c) => c.name === "lead")[2]!.ctx.inputs.map((i) => i.name)).toEqual(["coder", "tester", "coder"]);
  });

  it("fans the whole task out to every worker when the first answer is unstructured, then takes plain text as final", async () => {
    const { options } = fakeEnv();
    const agent = scripted({ lead: lead(["let me think", "the combined answer"]) });
    const result = await runSupervisor([spec("a"), spec("b")], spec("lead"), "t", agent, options);
    expect(result.rounds[0]!.decision).toBe("fan_out");
    expect(result.rounds[0]!.delegations.map((d) => [d.worker, d.task])).toEqual([
      ["a", "t"],
      ["b", "t"],
    ]);
    expect(result.rounds[1]!.decision).toBe("final");
    expect(result.final_answer).toBe("the combined answer");
  });

  it("records a delegation to an unknown worker as an error entry without failing the run", async () => {
    const { options } = fakeEnv();
    const agent = scripted({ lead: lead(['{"delegate": [{"worker": "ghost", "task": "x"}, {"worker": "a", "task": "y"}]}', '{"final_answer": "ok"}']) });
    const result = await runSupervisor([spec("a")], spec("lead"), "t", agent, options);
    expect(result.rounds[0]!.delegations.map((d) => d.output.error)).toEqual(["the supervisor delegated to 'ghost', which is not a worker", null]);
    expect(result.final_answer).toBe("ok");
  });

  it("after max_rounds asks once more for the final answer only; a further delegation falls back to the workers' answers", async () => {
    const { options } = fakeEnv();
    const always = '{"delegate": [{"worker": "a", "task": "again"}]}';
    const agent = scripted({ lead: lead([always, always, always]) });
    const result = await runSupervisor([spec("a")], spec("lead"), "t", agent, { ...options, max_rounds: 2 });
    expect(result.rounds.map((r) => r.decision)).toEqual(["delegate", "delegate", "failed"]);
    expect(agent.calls.filter((c) => c.name === "lead")[2]!.task).toContain("No delegation rounds are left.");
    expect(result.completed).toBe(false);
    expect(result.final_answer).toBe("[a]\na: again");
  });

  it("with max_rounds 0 the supervisor answers alone", async () => {
    const { options } = fakeEnv();
    const agent = scripted({ lead: lead(["direct answer"]) });
    const result = await runSupervisor([spec("a")], spec("lead"), "t", agent, { ...options, max_rounds: 0 });
    expect(result).toMatchObject({ final_answer: "direct answer", completed: true, agent_calls: 1 });
  });

  it("falls back to the latest workers' answers when the supervisor fails", async () => {
    const { options } = fakeEnv();
    let n = 0;
    const agent = scripted({
      lead: () => (n++ === 0 ? output("lead", '{"delegate": [{"worker": "a", "task": "x"}]}') : ({ name: "lead" } as never)),
    });
    const result = await runSupervisor([spec("a")], spec("lead"), "t", agent, options);
    expect(result.rounds.map((r) => r.decision)).toEqual(["delegate", "failed"]);
    expect(result.rounds[1]!.supervisor.error).toMatch(/invalid agent output/);
    expect(result).toMatchObject({ completed: false, final_answer: "[a]\na: x" });
  });

  it("refuses duplicate worker names and a bad max_rounds", async () => {
    const { options } = fakeEnv();
    await expect(runSupervisor([spec("a"), spec("a")], spec("lead"), "t", scripted(), options)).rejects.toThrow(/two workers are named 'a'/);
    await expect(runSupervisor([spec("a")], spec("lead"), "t", scripted(), { ...options, max_rounds: 1.5 })).rejects.toThrow(/max_rounds/);
  });
});
