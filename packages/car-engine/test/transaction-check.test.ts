/** `transactionCheck` at admission: strict rejects before anything runs, warn records and runs, off checks nothing. */
import { describe, expect, it } from "vitest";
import { fakeRuntime, tc } from "./helpers.ts";

// Two actions write `k` with no path between them: a write_write conflict.
const racing = (id: string) => ({ id, actions: [tc("a", "t", { expected_effects: { k: 1 } }), tc("b", "t", { expected_effects: { k: 2 } })] });

describe("transactionCheck at admission", () => {
  it("strict rejects the conflicting actions with nothing dispatched", async () => {
    const { rt } = fakeRuntime({ transactionCheck: "strict" });
    let calls = 0;
    rt.registerTool("t", () => (calls++, "ok"));
    const r = await rt.executeProposal(racing("p"));
    expect(calls).toBe(0);
    expect(r.results.map((x) => x.status)).toEqual(["rejected", "rejected"]);
    expect(r.results[0]!.error).toMatch(/^transaction conflict \(write_write\) on 'k'/);
    expect(rt.state.exists("k")).toBe(false);
  });

  it("warn records a transaction_warning naming the key and executes", async () => {
    const { rt } = fakeRuntime({ transactionCheck: "warn" });
    rt.registerTool("t", () => "ok");
    const r = await rt.executeProposal(racing("p"));
    expect(r.results.map((x) => x.status)).toEqual(["succeeded", "succeeded"]);
    const [warning] = rt.events.query({ kinds: ["transaction_warning"] });
    expect(warning!.data).toMatchObject({ mode: "warn", keys: ["k"], conflicts: [{ kind: "write_write", key: "k" }] });
  });

  it("off (the default) checks nothing", async () => {
    const { rt } = fakeRuntime();
    rt.registerTool("t", () => "ok");
    const r = await rt.executeProposal(racing("p"));
    expect(r.results.map((x) => x.status)).toEqual(["succeeded", "succeeded"]);
    expect(rt.events.query({ kinds: ["transaction_warning"] })).toEqual([]);
  });
});
