import { CarError } from "@car/ir";
import { describe, expect, it } from "vitest";
import { PLANNER_EVENT_KINDS, runPlanLoop } from "./index.ts";
import type { PlanRequest } from "./index.ts";
import { fakeRuntime, tc } from "../../test/helpers.ts";

const SECRET = "s3cret-token-value";

describe("runPlanLoop", () => {
  it("feeds each failure back to the model until a plan runs, and records every attempt", async () => {
    const { rt } = fakeRuntime();
    const written: string[] = [];
    rt.registerTool({ name: "write", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }, (p) => {
      if (p["path"] === "/readonly") throw new Error("permission denied");
      written.push(String(p["path"]));
      return { ok: true };
    });
    const requests: PlanRequest[] = [];
    const answers: unknown[] = [
      "{ this is not json",
      { actions: [tc("a", "teleport", { parameters: { token: SECRET } })] },
      { actions: [tc("a", "write", { parameters: { path: "/readonly", token: SECRET } })] },
      { actions: [tc("a", "write", { parameters: { path: "/tmp/out", token: SECRET } })] },
    ];
    const result = await runPlanLoop({
      runtime: rt,
      task: "write the report",
      maxAttempts: 5,
      propose: (request) => {
        requests.push(request);
        return answers[request.attempt - 1];
      },
    });

    expect(result.outcome).toBe("succeeded");
    expect(result.attempts.map((a) => a.verdict)).toEqual(["invalid_proposal", "verification_failed", "execution_failed", "succeeded"]);
    expect(written).toEqual(["/tmp/out"]);
    expect(result.result?.results.map((r) => r.status)).toEqual(["succeeded"]);

    // What the model saw on each attempt: the tools, and every earlier failure in order.
    expect(requests.map((r) => r.feedback.length)).toEqual([0, 1, 2, 3]);
    expect(requests[0]!.tools.map((t) => t.name)).toEqual(["write"]);
    const last = requests[3]!.feedback;
    expect(last[0]).toMatchObject({ attempt: 1, verdict: "invalid_proposal" });
    expect(last[1]).toMatchObject({ attempt: 2, verdict: "verification_failed" });
    expect(last[1]!.verdict === "verification_failed" && last[1]!.issues.some((i) => /teleport/.test(i.message))).toBe(true);
    expect(last[2]).toMatchObject({ attempt: 3, verdict: "execution_failed", failures: [{ action_id: "a", status: "failed" }] });
    expect(last[2]!.verdict === "execution_failed" && /permission denied/.test(last[2]!.failures[0]!.error ?? "")).toBe(true);

    // The audit log holds the loop: start, one event per attempt with its verdict, completion; never a parameter value.
    const events = rt.events.query({ proposal_id: result.run_id });
    expect(events.map((e) => e.kind)).toEqual([PLANNER_EVENT_KINDS.started, ...Array(4).fill(PLANNER_EVENT_KINDS.attempt), PLANNER_EVENT_KINDS.completed]);
    expect(events.filter((e) => e.kind === PLANNER_EVENT_KINDS.attempt).map((e) => e.data["verdict"])).toEqual(result.attempts.map((a) => a.verdict));
    expect(events.at(-1)!.data).toEqual({ outcome: "succeeded", attempts: 4 });
    expect(JSON.stringify(events)).not.toContain(SECRET);
  });

  it("stops after maxAttempts with the last run's result, and survives a model that throws", async () => {
    const { rt } = fakeRuntime();
    rt.registerTool("flaky", () => {
      throw new Error("down");
    });
    let calls = 0;
    const result = await runPlanLoop({
      runtime: rt,
      task: "t",
      maxAttempts: 3,
      propose: ({ attempt }) => {
        calls++;
        if (attempt === 2) throw new Error("model overloaded");
        return { actions: [tc("a", "flaky")] };
      },
    });
    expect(calls).toBe(3);
    expect(result.outcome).toBe("exhausted");
    expect(result.attempts.map((a) => a.verdict)).toEqual(["execution_failed", "model_error", "execution_failed"]);
    expect(result.attempts[1]!.feedback).toEqual({ attempt: 2, verdict: "model_error", message: "model overloaded" });
    expect(result.result!.results[0]!.status).toBe("failed");
    expect(rt.events.query({ proposal_id: result.run_id }).at(-1)!.data).toEqual({ outcome: "exhausted", attempts: 3 });
  });

  it("executes the best-ranked of several candidates", async () => {
    const { rt } = fakeRuntime();
    const seen: number[] = [];
    rt.registerTool("step", (p) => seen.push(Number(p["n"])));
    const long = { id: "long", actions: Array.from({ length: 12 }, (_, i) => tc(`s${i}`, "step", { parameters: { n: i } })) };
    const short = { id: "short", actions: [tc("s0", "step", { parameters: { n: 100 } })] };
    const result = await runPlanLoop({ runtime: rt, task: "t", propose: () => [long, short] });
    expect(result.attempts[0]).toMatchObject({ verdict: "succeeded", candidates: 2, proposal_id: "short" });
    expect(seen).toEqual([100]);
  });

  it("refuses bad arguments with typed errors", async () => {
    const { rt } = fakeRuntime();
    for (const bad of [{ maxAttempts: 0 }, { maxAttempts: 21 }, { maxAttempts: 1.5 }, { propose: "nope" }, { target: { cost_weight: 2 } }]) {
      await expect(runPlanLoop({ runtime: rt, task: "t", propose: () => ({ actions: [] }), ...(bad as object) })).rejects.toBeInstanceOf(CarError);
    }
  });
});
