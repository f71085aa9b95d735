import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AgentSpec } from "@car/ir";
import { fakeEnv, output, scripted } from "../../test/multi/agents.ts";
import { type ManualTimers, sleep } from "../index.ts";
import { checkGrant, readMainAnswer, runSubtask, spawnSubtaskSchema } from "./index.ts";
import { isCarError } from "@car/ir";

const main: AgentSpec = { name: "lead", system_prompt: "you lead", tools: ["grep", "read_file"], max_turns: 3, metadata: { model: "m" } };

/** A main agent that answers turn by turn from a script. */
function mainScript(turns: string[]) {
  let turn = 0;
  return () => output("lead", turns[turn++] ?? '{"final_answer": "out of script"}');
}

describe("runSubtask", () => {
  it("spawns sub-agents with a subset of the main agent's tools, concurrently, and feeds their answers back", async () => {
    const { options, timers } = fakeEnv();
    const spawns = JSON.stringify({
      spawn_subtask: [
        { task: "find uses", tools: ["grep"] },
        { task: "read the file", tools: ["read_file"], system_prompt: "be brief" },
      ],
    });
    let inFlight = 0;
    let maxInFlight = 0;
    const sub = async (task: string, ctx: { signal: AbortSignal }, s: AgentSpec) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await sleep(timers as ManualTimers, 10, ctx.signal);
      inFlight--;
      return output(s.name, `${s.tools.join(",")} did ${task}`);
    };
    const agent = scripted({
      lead: mainScript([spawns, '{"final_answer": "combined"}']),
      "lead/sub-1": sub,
      "lead/sub-2": sub,
    });
    const result = await (timers as ManualTimers).settle(runSubtask(main, "investigate", agent, options));

    expect(result).toMatchObject({ completed: true, final_answer: "combined" });
    expect(result.subtasks.map((s) => [s.id, s.turn, s.status, s.output?.answer])).toEqual([
      ["sub-1", 1, "succeeded", "grep did find uses"],
      ["sub-2", 1, "succeeded", "read_file did read the file"],
    ]);
    expect(maxInFlight).toBe(2);
    const subSpecs = agent.calls.filter((c) => c.name.startsWith("lead/"));
    expect(subSpecs).toHaveLength(2);
    // The second turn sees both results.
    const turn2 = agent.calls.filter((c) => c.name === "lead")[1]!;
    expect(turn2.task).toContain("grep did find uses");
    expect(turn2.ctx.inputs.map((i) => i.name)).toEqual(["sub-1", "sub-2"]);
  });

  it("rejects a grant outside the main agent's tools before any sub-agent runs", async () => {
    const { options } = fakeEnv();
    const agent = scripted({
      lead: mainScript([
        JSON.stringify({
          spawn_subtask: [
            { task: "ok", tools: ["grep"] },
            { task: "escalate", tools: ["shell"] },
          ],
        }),
        "I could not.",
      ]),
    });
    const result = await runSubtask(main, "t", agent, options);
    expect(agent.calls.filter((c) => c.name !== "lead")).toHaveLength(0);
    expect(result.subtasks.map((s) => s.status)).toEqual(["rejected", "rejected"]);
    expect(result.subtasks[1]!.error).toMatch(/tools/);
    expect(result).toMatchObject({ completed: true, final_answer: "I could not." });
  });

  it("the executor re-checks a grant: only main's own tools, never spawn_subtask itself", () => {
    expect(checkGrant(["grep"], main)).toEqual(["grep"]);
    for (const grant of [["shell"], "grep", [1], ["spawn_subtask"], null]) {
      const error = (() => {
        try {
          checkGrant(grant, { ...main, tools: [...main.tools, "spawn_subtask"] });
        } catch (e) {
          return e;
        }
      })();
      expect(isCarError(error, "policy_denied"), JSON.stringify(grant)).toBe(true);
    }
  });

  it("offers the main agent the spawn_subtask schema as a tool, and sub-agents none", async () => {
    const { options } = fakeEnv();
    const agent = scripted({ lead: mainScript([JSON.stringify({ spawn_subtask: [{ task: "x", tools: ["grep"] }] }), '{"final_answer": "y"}']) });
    await runSubtask(main, "t", agent, options);
    const [first, sub] = agent.calls;
    expect(first!.ctx.tools.map((t) => t.name)).toEqual(["spawn_subtask"]);
    expect(first!.ctx.tools[0]).toEqual(spawnSubtaskSchema(main));
    expect(sub!.ctx.tools).toEqual([]);
  });

  it("the tool's schema makes the grant an enum of main's tools", () => {
    const schema = spawnSubtaskSchema(main);
    expect((schema.parameters as any).properties.tools.items.enum).toEqual(["grep", "read_file"]);
    const none = spawnSubtaskSchema({ ...main, tools: [] });
    expect((none.parameters as any).properties.tools.maxItems).toBe(0);
  });

  it("max_agents caps the sub-agents the main agent may spawn", async () => {
    const { options } = fakeEnv({ budget: { max_agents: 2 } });
    const many = JSON.stringify({ spawn_subtask: [1, 2, 3].map((n) => ({ task: `part ${n}`, tools: ["grep"] })) });
    const agent = scripted({ lead: mainScript([many, '{"final_answer": "done"}']) });
    const result = await runSubtask(main, "t", agent, options);
    // The main agent's first turn is one call; one sub-agent more fits; the rest and turn 2 are refused.
    expect(result.agent_calls).toBe(2);
    expect(result.subtasks.map((s) => s.status)).toEqual(["succeeded", "failed", "failed"]);
    expect(result.subtasks[1]!.error).toMatch(/not started/);
    expect(result.completed).toBe(false);
  });

  it("ends after max_turns with the sub-agents' answers", async () => {
    const { options } = fakeEnv();
    const spawn = JSON.stringify({ spawn_subtask: { task: "again", tools: [] } });
    const agent = scripted({ lead: () => output("lead", spawn) });
    const result = await runSubtask({ ...main, max_turns: 2 }, "t", agent, options);
    expect(result.turns).toHaveLength(2);
    expect(result.subtasks).toHaveLength(1);
    expect(result.completed).toBe(false);
    expect(result.final_answer).toBe("[lead/sub-1]\nlead/sub-1: again");
  });

  it("reads the main agent's answer", () => {
    expect(readMainAnswer('{"final_answer": "x"}')).toEqual({ kind: "final", answer: "x" });
    expect(readMainAnswer('plan:\n```json\n{"spawn_subtask": [{"task": "a", "tools": []}]}\n```')).toMatchObject({ kind: "spawn" });
    expect(readMainAnswer("just text")).toEqual({ kind: "unstructured" });
  });

  it("for any grants, a sub-agent runs only with a subset of main's tools, and a turn with any other grant runs none", async () => {
    const universe = ["grep", "read_file", "shell", "write_file", "curl"];
    await fc.assert(
      fc.asyncProperty(
        fc.subarray(universe),
        fc.array(fc.uniqueArray(fc.constantFrom(...universe), { maxLength: 3 }), { minLength: 1, maxLength: 4 }),
        async (mainTools, grants) => {
          const { options } = fakeEnv();
          const lead = { ...main, tools: mainTools, max_turns: 2 };
          const granted: string[][] = [];
          const sub = (_task: string, _ctx: unknown, s: AgentSpec) => {
            granted.push(s.tools);
            return output(s.name, "done");
          };
          const agent = scripted({
            lead: mainScript([JSON.stringify({ spawn_subtask: grants.map((tools, i) => ({ task: `t${i}`, tools })) }), '{"final_answer": "f"}']),
            ...Object.fromEntries(grants.map((_, i) => [`lead/sub-${i + 1}`, sub])),
          });
          const result = await runSubtask(lead, "t", agent, options);
          const ran = agent.calls.filter((c) => c.name !== "lead");
          for (const tools of granted) for (const t of tools) expect(mainTools).toContain(t);
          const allowed = grants.every((g) => g.every((t) => mainTools.includes(t)));
          expect(ran).toHaveLength(allowed ? grants.length : 0);
          expect(result.subtasks.map((r) => r.status)).toEqual(grants.map(() => (allowed ? "succeeded" : "rejected")));
        },
      ),
      { numRuns: 100 },
    );
  });
});
