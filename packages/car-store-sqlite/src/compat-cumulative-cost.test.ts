/**
 * `@car/engine/compat`'s `metricsSummary` / `metricsAlerts` over a real
 * SQLite store: agents' spend cut out of the log by retention is carried in
 * the cut's checkpoint, so `cumulative_cost_usd` is the same before and
 * after the cut and a tripped budget alert stays tripped.
 */
import { manualClock } from "@car/ir";
import { CarRuntime } from "@car/engine/compat";
import { runSwarm } from "@car/engine/multi";
import { tempDatabase, type TempDir } from "@car/test-kit/temp-database";
import { afterEach, expect, it } from "vitest";
import { sqlite } from "./sqlite-store.ts";

let temp: TempDir | undefined;
afterEach(() => temp?.remove());

it("keeps cumulative_cost_usd across a retention cut", async () => {
  temp = tempDatabase();
  const clock = manualClock(Date.parse("2026-03-01T00:00:00Z"));
  const store = sqlite(temp.db, { clock });
  try {
    const rt = new CarRuntime({ store, clock });
    const spec = (name: string) => ({ name, system_prompt: name, tools: [], max_turns: 1, metadata: {} });
    const agent = async ({ name }: { name: string }) =>
      JSON.stringify({
        name,
        answer: "x",
        turns: 1,
        tool_calls: 0,
        duration_ms: 1,
        error: null,
        tokens: { input_tokens: 7, output_tokens: 3, cost_usd: 0.125 },
      });
    await runSwarm("parallel", [spec("a"), spec("b")], "t", agent, { runtime: rt.runtime });
    await rt.runtime.executeProposal({ id: "later", actions: [{ id: "w", type: "state_write", parameters: { key: "k", value: 1 } }] });
    const before = JSON.parse(await rt.metricsSummary());
    expect(before).toMatchObject({ cost_usd: 0.25, cumulative_cost_usd: 0.25 });

    const cut = await store.enforceRetention(clock.now(), { mode: "truncate", max_events: 1 });
    expect(cut.checkpoint?.checkpoint.cost_usd).toBe(0.25);
    const after = JSON.parse(await rt.metricsSummary());
    expect(after.total_events).toBe(1);
    expect(after).toMatchObject({ cost_usd: 0, cumulative_cost_usd: before.cumulative_cost_usd });
    const { alerts } = JSON.parse(await rt.metricsAlerts(JSON.stringify({ max_cost_usd: 0.2 })));
    expect(alerts.map((a: { kind: string }) => a.kind)).toEqual(["cost_overage"]);
  } finally {
    await store.close();
  }
});
