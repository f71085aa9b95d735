import { describe, expect, it } from "vitest";
import { Runtime } from "../src/index.ts";

describe("Runtime.registerAll", () => {
  it("registers a batch of tools and policies, or nothing when one entry is bad", async () => {
    const rt = new Runtime();
    expect(() =>
      rt.registerAll([{ name: "ok" }, { name: "broken", parameters: { type: "no-such-type" } }], [{ name: "deny-ok", rule: "deny_tool", target: "ok" }]),
    ).toThrow(expect.objectContaining({ code: "invalid_schema" }));
    expect(() => rt.registerAll([{ name: "ok" }], [{ name: "half", rule: "deny_tool" }])).toThrow(expect.objectContaining({ code: "invalid_params" }));
    expect(rt.listTools()).toEqual([]);
    expect(rt.policies.size).toBe(0);

    rt.registerAll(["ok", "other"], [{ name: "deny-ok", rule: "deny_tool", target: "ok" }]);
    expect(rt.listTools().map((t) => t.name)).toEqual(["ok", "other"]);
    const result = await rt.executeProposal({ actions: [{ id: "a", type: "tool_call", tool: "ok" }] }, () => "null");
    expect(result.results[0]).toMatchObject({ status: "rejected" });
    expect(result.results[0]!.error).toContain("deny-ok");
  });
});
