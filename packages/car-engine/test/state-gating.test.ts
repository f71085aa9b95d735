/**
 * DECISIONS §13 at run time: an action whose state dependency nobody
 * provides is rejected before dispatch (its tool is never called), and the
 * engine agrees with `optimize`, which turns such a dependency into an
 * `exists` precondition. §14: a failed `skip` action ends `skipped`.
 */
import { optimize } from "@car/verify";
import { parseProposal } from "@car/ir";
import { describe, expect, it } from "vitest";
import { fakeRuntime, tc } from "./helpers.ts";

describe("state dependencies at run time", () => {
  it("rejects an action whose state dependency is absent, before its tool is called", async () => {
    const { rt } = fakeRuntime();
    let calls = 0;
    rt.registerTool("deploy", () => (calls++, "ok"));
    const proposal = { id: "p", actions: [tc("deploy", "deploy", { state_dependencies: ["ghost"] })] };
    const r = await rt.executeProposal(proposal);
    expect(calls).toBe(0);
    expect(r.results[0]).toMatchObject({ status: "rejected", error: expect.stringContaining("state dependency 'ghost' is not available at this point") });
    expect(rt.events.query({ kinds: ["action_rejected"] })[0]!.data).toMatchObject({ stage: "state_dependency" });
    // The optimized form is rejected the same way, with nothing dispatched either.
    const optimized = await rt.executeProposal({ ...optimize(parseProposal(proposal)), id: "p-opt" });
    expect(optimized.results[0]!.status).toBe("rejected");
    expect(calls).toBe(0);
  });

  it("runs once the key is present, in the initial state or written by the earlier writer", async () => {
    const { rt } = fakeRuntime();
    rt.registerTool("use", () => "used");
    const written = await rt.executeProposal({
      actions: [{ id: "w", type: "state_write", parameters: { key: "cfg", value: 1 } }, tc("use", "use", { state_dependencies: ["cfg"] })],
    });
    expect(written.results.map((x) => x.status)).toEqual(["succeeded", "succeeded"]);
    rt.state.set("other", true);
    const initial = await rt.executeProposal({ actions: [tc("use", "use", { state_dependencies: ["other"] })] });
    expect(initial.results[0]!.status).toBe("succeeded");
  });

  it("rejects the dependant of a writer that did not succeed even where an older value exists", async () => {
    const { rt } = fakeRuntime();
    rt.state.set("cfg", "old");
    rt.registerTool("fail", () => {
      throw new Error("down");
    });
    let used = 0;
    rt.registerTool("use", () => (used++, "used"));
    const r = await rt.executeProposal({
      actions: [
        tc("w", "fail", { failure_behavior: "skip", expected_effects: { cfg: "new" } }),
        tc("use", "use", { state_dependencies: ["cfg"], failure_behavior: "skip" }),
      ],
    });
    expect(r.results.map((x) => x.status)).toEqual(["skipped", "rejected"]);
    expect(used).toBe(0);
  });
});
