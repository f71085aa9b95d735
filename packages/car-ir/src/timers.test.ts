import { describe, expect, it } from "vitest";
import { manualTimers, sleep } from "./timers.ts";

describe("manualTimers", () => {
  it("fires due timers in order when time advances, and not before", () => {
    const t = manualTimers();
    const fired: string[] = [];
    t.setTimeout(() => fired.push("b"), 20);
    t.setTimeout(() => fired.push("a"), 10);
    const c = t.setTimeout(() => fired.push("c"), 15);
    t.clearTimeout(c);
    t.advance(9);
    expect(fired).toEqual([]);
    t.advance(11);
    expect(fired).toEqual(["a", "b"]);
    expect(t.now()).toBe(20);
    expect(t.pending()).toBe(0);
  });

  it("settle drives sleeps to completion without real waiting", async () => {
    const t = manualTimers();
    const done = (async () => {
      await sleep(t, 60_000);
      await sleep(t, 60_000);
      return t.now();
    })();
    expect(await t.settle(done)).toBe(120_000);
  });

  it("sleep rejects with the abort reason and clears its timer", async () => {
    const t = manualTimers();
    const ac = new AbortController();
    const p = sleep(t, 1000, ac.signal);
    ac.abort(new Error("stop"));
    await expect(p).rejects.toThrow("stop");
    expect(t.pending()).toBe(0);
  });
});
