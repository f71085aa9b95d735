/**
 * One proposal must not hold the event loop (issue "one door" §4): actions
 * whose parameters bring in large referenced outputs are gated and
 * dispatched a turn of the loop apart, so what other connections need (here,
 * a ticker on `setImmediate`) runs in between; small references keep running
 * back to back, and an abort withdraws what waits for its turn.
 */
import { describe, expect, it } from "vitest";
import { fakeRuntime, tc } from "./helpers.ts";

/** Counts turns of the event loop until stopped. */
function ticker(): { turn: () => number; stop: () => void } {
  let turns = 0;
  let running = true;
  const tick = () => {
    turns++;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  return { turn: () => turns, stop: () => (running = false) };
}

const consumers = (n: number) => Array.from({ length: n }, (_, i) => tc(`u${i}`, "use", { parameters: { v: "$m.output" }, dependencies: ["m"] }));

describe("actions with large references", () => {
  it("are dispatched a turn of the event loop apart", async () => {
    const { rt } = fakeRuntime();
    const big = { rows: Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `row ${i}` })) };
    const clock = ticker();
    const turns: number[] = [];
    rt.registerTool("make", () => big);
    rt.registerTool("use", () => {
      turns.push(clock.turn());
      return 1;
    });
    const result = await rt.executeProposal({ actions: [tc("m", "make"), ...consumers(10)] });
    clock.stop();
    expect(result.results.every((r) => r.status === "succeeded")).toBe(true);
    expect(turns).toHaveLength(10);
    for (let k = 1; k < turns.length; k++) expect(turns[k]!).toBeGreaterThan(turns[k - 1]!);
  });

  it("small references run back to back", async () => {
    const { rt } = fakeRuntime();
    const clock = ticker();
    const turns: number[] = [];
    rt.registerTool("make", () => ({ id: 1 }));
    rt.registerTool("use", () => {
      turns.push(clock.turn());
      return 1;
    });
    await rt.executeProposal({ actions: [tc("m", "make"), ...consumers(10)] });
    clock.stop();
    expect(new Set(turns).size).toBe(1);
  });

  it("one waiting for its turn when the run aborts is never dispatched, and ends skipped", async () => {
    const { rt } = fakeRuntime();
    const big = "x".repeat(1_000_000);
    const used: string[] = [];
    rt.registerTool("make", () => big);
    rt.registerTool("use", (_p, ctx) => {
      used.push(ctx.action_id);
      return 1;
    });
    rt.registerTool("fail", () => {
      throw new Error("no");
    });
    // u0 brings in 1 MB and runs; u1 waits for a turn; f, ready in the same pump, fails and aborts the run first.
    const result = await rt.executeProposal({ actions: [tc("m", "make"), ...consumers(2), tc("f", "fail", { dependencies: ["m"] })] });
    expect(used).toEqual(["u0"]);
    expect(result.results.find((r) => r.action_id === "u1")!.status).toBe("skipped");
  });
});
