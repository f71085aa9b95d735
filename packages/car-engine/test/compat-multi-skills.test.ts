/**
 * node-api.md's `runTournament` / `runSubtask` (JSON strings through the
 * registered runner, budget as JSON) and `evolveSkills` / `repairSkill`
 * without a user-supplied improver.
 */
import { isCarError } from "@car/ir";
import { describe, expect, it } from "vitest";
import { CarRuntime, registerAgentRunner, runSubtask, runTournament } from "../src/compat/index.ts";

const spec = (name: string, tools: string[] = []) => ({ name, system_prompt: name, tools, max_turns: 2, metadata: {} });
const answer = (name: string, text: string) => JSON.stringify({ name, answer: text, turns: 1, tool_calls: 0, duration_ms: 1 });

describe("runTournament / runSubtask", () => {
  it("rank competitors and spawn tool-constrained sub-agents through the registered runner", async () => {
    await registerAgentRunner(async (specJson, task) => {
      const s = JSON.parse(specJson) as { name: string; tools: string[] };
      if (s.name === "judge") return answer("judge", task.includes("[A]\nlong answer") ? "A" : "B");
      if (s.name === "lead")
        return answer("lead", task.includes("Subtask results") ? '{"final_answer": "merged"}' : '{"spawn_subtask": [{"task": "look", "tools": ["grep"]}]}');
      if (s.name === "short") return answer("short", "short");
      if (s.name === "long") return answer("long", "long answer");
      return answer(s.name, `${s.tools.join(",")} looked`);
    });
    const t = JSON.parse(await runTournament(JSON.stringify([spec("short"), spec("long")]), JSON.stringify(spec("judge")), "write"));
    expect(t).toMatchObject({ winner_name: "long", winner_answer: "long answer", ranking: ["long", "short"] });

    const sub = JSON.parse(await runSubtask(JSON.stringify(spec("lead", ["grep", "cat"])), "investigate", JSON.stringify({ max_agents: 5 })));
    expect(sub).toMatchObject({ final_answer: "merged", completed: true });
    expect(sub.subtasks[0]).toMatchObject({ status: "succeeded", output: { answer: "grep looked" } });

    const refused = await runSubtask(JSON.stringify(spec("lead")), "t", JSON.stringify({ max_total_tokens: "many" })).catch((e: unknown) => e);
    expect(isCarError(refused, "invalid_params")).toBe(true);
  });
});

describe("evolveSkills / repairSkill without an improver", () => {
  it("re-distill the trace and repair from the runtime's own events", async () => {
    const rt = new CarRuntime();
    const trace = ["e1", "e2"].flatMap((episode) =>
      ["fetch", "parse"].map((tool) => ({ kind: "action_succeeded", tool, data: { episode, domain: "web" }, reward: 1 })),
    );
    const evolved = JSON.parse(await rt.evolveSkills(JSON.stringify(trace), "web"));
    expect(evolved.map((s: { name: string }) => s.name)).toEqual(["web/fetch+parse"]);

    await rt.ingestSkill("legacy", "old()", "ops", "", "", [], "the old way");
    for (let i = 0; i < 3; i++) rt.reportOutcome("legacy", "fail");
    // Nothing in this runtime's own events keeps succeeding yet: no repair.
    expect(await rt.repairSkill("legacy")).toBeNull();
    rt.runtime.registerTool("check", () => "ok");
    rt.runtime.registerTool("restart", () => "ok");
    for (const id of ["p1", "p2"]) {
      await rt.runtime.executeProposal({
        id,
        actions: [
          { id: "a", type: "tool_call", tool: "check" },
          { id: "b", type: "tool_call", tool: "restart", dependencies: ["a"] },
        ],
      });
    }
    expect(await rt.repairSkill("legacy")).toBe("check → restart");
    expect(JSON.parse(rt.listSkills())[0]).toMatchObject({ name: "legacy", version: 2, change: "repaired" });
  });
});

describe("the validation-gated lifecycle through CarRuntime", () => {
  it("trials, gates, reads meta, exports and imports", async () => {
    const rt = new CarRuntime();
    await rt.ingestSkill("deploy", "old", "ops", "", "", [], "");
    expect(rt.ingestProvisionalSkills(JSON.stringify([{ name: "deploy", code: "new", domain: "ops" }]))).toBe(1);
    expect(() => rt.ingestProvisionalSkills("[]", "acme")).toThrow(/tenant/);
    expect(JSON.parse(await rt.skillMeta("deploy@cand"))).toMatchObject({ status: "provisional", incumbent: "deploy" });
    for (let i = 0; i < 5; i++) rt.reportOutcome("deploy@cand", "success");
    expect(JSON.parse(await rt.gateSkillCandidates())).toEqual({ promoted: ["deploy@cand"], rejected: [] });
    expect(await rt.skillMeta("deploy@cand")).toBe("null");
    const doc = (await rt.exportSkill("deploy"))!;
    const other = new CarRuntime();
    expect(await other.importSkill(doc)).toBe(true);
    expect(JSON.parse(other.listSkills())[0]).toMatchObject({ name: "deploy", code: "new", change: "imported" });
    await expect(other.importSkill(doc.replace('code = "new"', 'code = "evil"'))).rejects.toSatisfy((e) => isCarError(e, "invalid_params"));
  });
});
