import { describe, expect, it } from "vitest";
import { Runtime } from "../runtime.ts";
import { parkedCalls } from "./shape-keeper.ts";

const proposal = { actions: [{ id: "a", type: "tool_call" as const, tool: "t", parameters: {} }] };

describe("the shape keeper", () => {
  it("parks one run per process, on a runtime of its own, from the first proposal on", async () => {
    expect(parkedCalls()).toBe(0);
    const first = new Runtime();
    first.registerTool("t", async () => ({ ok: true }));
    const result = await first.executeProposal(proposal);
    expect(result.results.map((r) => r.status)).toEqual(["succeeded"]);
    expect(parkedCalls()).toBe(1);
    const second = new Runtime();
    second.registerTool("t", () => null);
    await second.executeProposal(proposal);
    await first.executeProposal(proposal);
    expect(parkedCalls()).toBe(1);
    // Nothing of the parked run reaches a user's runtime.
    for (const rt of [first, second]) expect(rt.events.query().filter((e) => e.action_id !== undefined && e.action_id !== "a")).toEqual([]);
  });
});
