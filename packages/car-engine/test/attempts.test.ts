/** Every failed attempt of a tool call is on the record, not only the retry count. */
import { describe, expect, it } from "vitest";
import { fakeRuntime, tc } from "./helpers.ts";

describe("failed attempts", () => {
  it("records each failed attempt with its number, error class and duration, never the parameters", async () => {
    const { rt, timers } = fakeRuntime();
    let calls = 0;
    rt.registerTool("flaky", async () => {
      calls++;
      await new Promise<void>((resolve) => timers.setTimeout(resolve, 7));
      if (calls < 3) throw new Error(`down ${calls}`);
      return "up";
    });
    const r = await timers.settle(
      rt.executeProposal({ id: "p", actions: [tc("a", "flaky", { parameters: { secret: "s3cr3t" }, failure_behavior: "retry", max_retries: 3 })] }),
    );
    expect(r.results[0]!.status).toBe("succeeded");
    expect(r.cost.retries).toBe(2);
    const attempts = rt.events.query({ kinds: ["attempt_failed"] });
    const run_id = rt.events.query({ kinds: ["proposal_received"] })[0]!.data["run_id"];
    expect(attempts.map((e) => [e.action_id, e.data])).toEqual([
      ["a", { attempt: 1, error_class: "tool_error", duration_ms: 7, run_id }],
      ["a", { attempt: 2, error_class: "tool_error", duration_ms: 7, run_id }],
    ]);
    expect(JSON.stringify(attempts)).not.toContain("s3cr3t");
  });

  it("records the last failed attempt too, before the action fails", async () => {
    const { rt } = fakeRuntime();
    rt.registerTool("down", () => {
      throw new Error("no");
    });
    await rt.executeProposal({ id: "q", actions: [tc("a", "down")] });
    const kinds = rt.events.query({ proposal_id: "q" }).map((e) => e.kind);
    expect(kinds.indexOf("attempt_failed")).toBeGreaterThan(-1);
    expect(kinds.indexOf("attempt_failed")).toBeLessThan(kinds.indexOf("action_failed"));
  });
});
