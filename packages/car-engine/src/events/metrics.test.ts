import { describe, expect, it } from "vitest";
import { Runtime } from "../runtime.ts";
import { metricsSummary } from "./metrics.ts";

describe("metricsSummary", () => {
  it("avg_latency_ms is the mean time from each tool action's start to its outcome; state actions and rejections do not count", async () => {
    const runtime = new Runtime();
    runtime.registerTool("slow", () => new Promise((resolve) => setTimeout(() => resolve("ok"), 80)));
    runtime.registerTool("fails", () => Promise.reject(new Error("down")));
    expect(metricsSummary(runtime.events.query()).avg_latency_ms).toBeNull();
    await runtime.executeProposal({
      actions: [
        { id: "s", type: "tool_call", tool: "slow" },
        { id: "w", type: "state_write", parameters: { key: "k", value: 1 } },
        { id: "f", type: "tool_call", tool: "fails", failure_behavior: "skip" },
        { id: "r", type: "tool_call", tool: "slow", preconditions: [{ key: "missing", operator: "exists" }], failure_behavior: "skip" },
      ],
    });
    const summary = metricsSummary(runtime.events.query());
    expect(summary).toMatchObject({ actions_succeeded: 2, actions_failed: 1, actions_rejected: 1 });
    // Two tool outcomes: ~80 ms and ~0 ms, so the mean is about 40 ms (the clock has millisecond steps).
    expect(summary.avg_latency_ms).toBeGreaterThanOrEqual(35);
    expect(summary.avg_latency_ms).toBeLessThan(1_000);
    await runtime.close();
  });
});
