/**
 * Saga compensation with real external effects: tools write files, their
 * compensations remove them. An abort with `rollback: "compensate"` must
 * leave the directory as it was (for what can be undone), say per action
 * what happened, and keep going — or stop — as each fault demands.
 */
import { mkdtempSync, readdirSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ActionInput, parseProposalWithGraph } from "@car/ir";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { COMPENSATED_WARNING, ROLLBACK_WARNING, Runtime, TerminalToolError } from "../src/index.ts";
import type { RuntimeOptions } from "../src/index.ts";
import { planFromRecord } from "../src/compensation/compensation-plan.ts";
import { tc } from "./helpers.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "car-saga-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const files = () => readdirSync(dir).sort();

/** `write_file` creates a file; `remove_file` deletes one; `boom` fails; `fault` misbehaves as told. */
function sagaRuntime(options: RuntimeOptions = {}): { rt: Runtime; calls: string[] } {
  const rt = new Runtime(options);
  const calls: string[] = [];
  rt.registerTool("write_file", (p) => {
    calls.push(`write ${p["name"]}`);
    writeFileSync(join(dir, p["name"] as string), "x");
    return { path: join(dir, p["name"] as string) };
  });
  rt.registerTool("remove_file", (p) => {
    calls.push(`remove ${p["path"] ?? p["name"]}`);
    unlinkSync(typeof p["path"] === "string" ? p["path"] : join(dir, p["name"] as string));
    return { removed: true };
  });
  rt.registerTool("send_email", () => {
    calls.push("email");
    return "sent";
  });
  rt.registerTool("boom", () => {
    throw new Error("the deploy broke");
  });
  rt.registerTool("fault", (p, ctx) => {
    calls.push(`fault ${p["mode"]}`);
    if (p["mode"] === "throw") throw new Error("the undo broke");
    if (p["mode"] === "terminal") throw new TerminalToolError("credentials revoked");
    return new Promise((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject(new Error("aborted"))));
  });
  return { rt, calls };
}

const writes = (name: string, extra: object = {}) =>
  tc(`w_${name}`, "write_file", {
    parameters: { name },
    reversibility: "compensable",
    compensation: { type: "tool", tool: "remove_file", parameters: { name } },
    ...extra,
  });

describe("rollback: compensate", () => {
  it("undoes every succeeded compensable action in reverse completion order, and says so per action", async () => {
    const { rt, calls } = sagaRuntime();
    const r = await rt.executeProposal(
      { actions: [writes("a"), writes("b", { dependencies: ["w_a"] }), tc("fail", "boom", { dependencies: ["w_b"] })] },
      undefined,
      { rollback: "compensate" },
    );
    expect(files()).toEqual([]);
    expect(calls).toEqual(["write a", "write b", "remove b", "remove a"]);
    expect(r.results.map((x) => [x.action_id, x.status, x.rolled_back, x.compensated, x.error])).toEqual([
      ["w_a", "succeeded", true, true, COMPENSATED_WARNING],
      ["w_b", "succeeded", true, true, COMPENSATED_WARNING],
      ["fail", "failed", undefined, undefined, "the deploy broke"],
    ]);
    expect(r.cost.tool_calls).toBe(5); // three forward calls, two compensations
    const kinds = rt.events.query({ proposal_id: r.proposal_id }).map((e) => `${e.kind}${e.action_id ? `:${e.action_id}` : ""}`);
    expect(kinds.slice(kinds.indexOf("proposal_completed"))).toEqual([
      "proposal_completed",
      "compensation_planned",
      "compensation_started:w_b",
      "compensation_succeeded:w_b",
      "compensation_started:w_a",
      "compensation_succeeded:w_a",
      "compensation_completed",
    ]);
    await rt.close();
  });

  it("is opt-in: by default (and with rollback: state) nothing is compensated and the files stay", async () => {
    const { rt } = sagaRuntime();
    const r = await rt.executeProposal({ actions: [writes("a"), tc("fail", "boom", { dependencies: ["w_a"] })] });
    expect(files()).toEqual(["a"]);
    expect(r.results[0]).toMatchObject({ rolled_back: true, error: ROLLBACK_WARNING });
    expect(r.results[0]!.compensated).toBeUndefined();
    expect(rt.events.query({ kinds: ["compensation_planned"] })).toEqual([]);
    const perRuntime = sagaRuntime({ rollback: "compensate" }).rt;
    await perRuntime.executeProposal({ actions: [writes("b"), tc("fail", "boom", { dependencies: ["w_b"] })] });
    expect(files()).toEqual(["a"]);
  });

  it("names what remains: an irreversible action and a compensable one without a compensation", async () => {
    const { rt } = sagaRuntime();
    const r = await rt.executeProposal(
      {
        actions: [
          writes("a"),
          tc("mail", "send_email", { dependencies: ["w_a"] }),
          tc("half", "write_file", { parameters: { name: "h" }, reversibility: "compensable", dependencies: ["mail"] }),
          tc("fail", "boom", { dependencies: ["half"] }),
        ],
      },
      undefined,
      { rollback: "compensate" },
    );
    expect(files()).toEqual(["h"]);
    expect(r.results.slice(0, 3).map((x) => x.error)).toEqual([
      COMPENSATED_WARNING,
      "proposal aborted; state effects were rolled back; external effects remain: the action is irreversible",
      "proposal aborted; state effects were rolled back; external effects remain: it is compensable but declares no compensation",
    ]);
    const completed = rt.events.query({ kinds: ["compensation_completed"] })[0]!;
    expect(completed.data["external_effects_undone"]).toBe(false);
    expect((completed.data["not_undone"] as { action_id: string }[]).map((n) => n.action_id)).toEqual(["half", "mail"]);
  });

  it("an action_ref compensation runs the named action — never run forward — with the forward output resolved", async () => {
    const { rt, calls } = sagaRuntime();
    const proposal = {
      actions: [
        tc("w", "write_file", { parameters: { name: "a" }, reversibility: "compensable", compensation: { type: "action_ref", action_id: "undo" } }),
        tc("undo", "remove_file", { parameters: { path: "$w.output.path" }, dependencies: ["w"] }),
        tc("fail", "boom", { dependencies: ["w"] }),
      ],
    };
    const r = await rt.executeProposal(proposal, undefined, { rollback: "compensate" });
    expect(files()).toEqual([]);
    expect(calls).toEqual(["write a", `remove ${join(dir, "a")}`]);
    expect(r.results[0]!.compensated).toBe(true);
    expect(r.results[1]).toMatchObject({ status: "skipped", error: "compensation action: it runs only to undo the action that names it" });
    // On a proposal that succeeds, the compensation action is skipped and nothing is undone.
    const ok = await rt.executeProposal({ actions: proposal.actions.slice(0, 2) }, undefined, { rollback: "compensate" });
    expect(ok.results.map((x) => x.status)).toEqual(["succeeded", "skipped"]);
    expect(files()).toEqual(["a"]);
  });

  it("a compensation that throws is reported, and the others still run", async () => {
    const { rt } = sagaRuntime();
    const r = await rt.executeProposal(
      {
        actions: [
          writes("a"),
          tc("x", "write_file", {
            parameters: { name: "x" },
            reversibility: "compensable",
            compensation: { type: "tool", tool: "fault", parameters: { mode: "throw" } },
            dependencies: ["w_a"],
          }),
          tc("fail", "boom", { dependencies: ["x"] }),
        ],
      },
      undefined,
      { rollback: "compensate" },
    );
    expect(files()).toEqual(["x"]);
    expect(r.results[1]).toMatchObject({
      compensation_error: "the undo broke",
      error: "proposal aborted; state effects were rolled back; external effects remain: its compensation failed: the undo broke",
    });
    expect(r.results[0]!.compensated).toBe(true);
  });

  it("a compensation that hangs times out (its action's timeout_ms, else the runtime's compensation timeout)", async () => {
    const { rt } = sagaRuntime({ compensationTimeoutMs: 50 });
    const hang: Partial<ActionInput> = { reversibility: "compensable", compensation: { type: "tool", tool: "fault", parameters: { mode: "hang" } } };
    const r = await rt.executeProposal(
      { actions: [writes("a"), tc("x", "send_email", { ...hang, dependencies: ["w_a"] }), tc("fail", "boom", { dependencies: ["x"] })] },
      undefined,
      { rollback: "compensate" },
    );
    expect(r.results[1]!.compensation_error).toBe("timed out after 50 ms");
    expect(r.results[0]!.compensated).toBe(true);
    expect(files()).toEqual([]);
  });

  it("a terminal failure stops the phase: earlier-completed actions are not attempted, and say so", async () => {
    const { rt, calls } = sagaRuntime();
    const r = await rt.executeProposal(
      {
        actions: [
          writes("a"),
          tc("x", "send_email", {
            reversibility: "compensable",
            compensation: { type: "tool", tool: "fault", parameters: { mode: "terminal" } },
            max_retries: 3,
            failure_behavior: "retry",
            dependencies: ["w_a"],
          }),
          tc("fail", "boom", { dependencies: ["x"] }),
        ],
      },
      undefined,
      { rollback: "compensate" },
    );
    expect(calls.filter((c) => c.startsWith("fault"))).toEqual(["fault terminal"]);
    expect(files()).toEqual(["a"]);
    expect(r.results[1]!.compensation_error).toBe("credentials revoked");
    expect(r.results[0]!.compensation_error).toBe("not attempted: the compensation of 'x' failed terminally");
    expect(rt.events.query({ kinds: ["compensation_failed"] })[0]!.data).toEqual({
      error: "credentials revoked",
      terminal: true,
      run_id: expect.stringMatching(/^run-[0-9a-f]{12}$/),
    });
  });

  it("retries a failing compensation as its action declares", async () => {
    const { rt } = sagaRuntime();
    let attempts = 0;
    rt.registerTool("flaky_remove", (p) => {
      if (++attempts < 3) throw new Error("busy");
      unlinkSync(join(dir, p["name"] as string));
      return true;
    });
    const r = await rt.executeProposal(
      {
        actions: [
          tc("w", "write_file", {
            parameters: { name: "a" },
            reversibility: "compensable",
            compensation: { type: "tool", tool: "flaky_remove", parameters: { name: "a" } },
            max_retries: 2,
            failure_behavior: "retry",
          }),
          tc("fail", "boom", { dependencies: ["w"] }),
        ],
      },
      undefined,
      { rollback: "compensate" },
    );
    expect(attempts).toBe(3);
    expect(r.results[0]!.compensated).toBe(true);
    expect(r.cost.retries).toBe(2);
    expect(files()).toEqual([]);
  });

  it("compensations pass the policies and trace rules: a denied one is a failed compensation naming the rule", async () => {
    const { rt } = sagaRuntime();
    rt.registerPolicy({ name: "no_removals", rule: "deny_tool", target: "remove_file" });
    const r = await rt.executeProposal({ actions: [writes("a"), tc("fail", "boom", { dependencies: ["w_a"] })] }, undefined, { rollback: "compensate" });
    expect(r.results[0]!.compensation_error).toMatch(/^denied by policy: no_removals:/);
    expect(files()).toEqual(["a"]);
    expect(rt.events.query({ kinds: ["policy_violation"] })[0]!.data).toMatchObject({ policy_name: "no_removals", compensation: true });
  });

  it("refuses an unknown rollback mode", async () => {
    const { rt } = sagaRuntime();
    await expect(rt.executeProposal({ actions: [] }, undefined, { rollback: "undo" as never })).rejects.toThrow(/rollback must be "state" or "compensate"/);
  });
});

describe("rollback: compensate within the interpolation budget", () => {
  it("resolves the undo's $id.output references within the budget: no step past it is dispatched, and the recorded plan stays bounded", async () => {
    const KIB = 1024;
    const rt = new Runtime({ maxInterpolatedBytes: 400 * KIB });
    const undone: number[] = [];
    rt.registerTool("big", () => "b".repeat(100 * KIB));
    rt.registerTool("step", () => "ok");
    rt.registerTool("undo", (p) => {
      undone.push((p["v"] as string).length);
      return "undone";
    });
    rt.registerTool("boom", () => {
      throw new Error("the deploy broke");
    });
    const N = 20;
    const actions: ActionInput[] = [tc("big", "big")];
    for (let i = 0; i < N; i++) {
      actions.push(tc(`s${i}`, "step", { dependencies: ["big"], reversibility: "compensable", compensation: { type: "action_ref", action_id: `u${i}` } }));
      actions.push(tc(`u${i}`, "undo", { dependencies: [`s${i}`, "big"], parameters: { v: "$big.output" } }));
    }
    actions.push(tc("fail", "boom", { dependencies: Array.from({ length: N }, (_, i) => `s${i}`) }));
    const r = await rt.executeProposal({ actions }, undefined, { rollback: "compensate" });
    // 400 KiB holds three copies of the 100 KiB output (with their JSON quotes): the rest are refused, not sent.
    expect(undone.length).toBeGreaterThan(0);
    expect(undone.length).toBeLessThanOrEqual(4);
    const refused = r.results.filter((x) => /its compensation failed: .*over the 409600-byte limit/.test(x.error ?? ""));
    expect(refused.length).toBe(N - undone.length);
    const planned = rt.events.query({ kinds: ["compensation_planned"] });
    expect(JSON.stringify(planned).length).toBeLessThan(600 * KIB);
    await rt.close();
  });

  it("records the references, each value once: twenty steps of one large output write it once, and a resumed plan substitutes it back", async () => {
    const KIB = 1024;
    const rt = new Runtime();
    const output = "b".repeat(200 * KIB);
    const undone: string[] = [];
    rt.registerTool("big", () => output);
    rt.registerTool("step", () => "ok");
    rt.registerTool("undo", (p) => {
      undone.push(p["v"] as string);
      return "undone";
    });
    rt.registerTool("boom", () => {
      throw new Error("the deploy broke");
    });
    const N = 20;
    const actions: ActionInput[] = [tc("big", "big")];
    for (let i = 0; i < N; i++) {
      actions.push(tc(`s${i}`, "step", { dependencies: ["big"], reversibility: "compensable", compensation: { type: "action_ref", action_id: `u${i}` } }));
      actions.push(tc(`u${i}`, "undo", { dependencies: [`s${i}`, "big"], parameters: { v: "$big.output", n: i } }));
    }
    actions.push(tc("fail", "boom", { dependencies: Array.from({ length: N }, (_, i) => `s${i}`) }));
    await rt.executeProposal({ actions }, undefined, { rollback: "compensate" });
    // Every step ran with the output itself…
    expect(undone).toHaveLength(N);
    expect(undone.every((v) => v === output)).toBe(true);
    // …and the plan recorded the reference in each step, the output once.
    const planned = rt.events.query({ kinds: ["compensation_planned"] })[0]!;
    const steps = planned.data["steps"] as { parameters: { v: string } }[];
    expect(steps.map((s) => s.parameters.v)).toEqual(Array(N).fill("$big.output"));
    expect(planned.data["references"]).toEqual({ "$big.output": output });
    expect(JSON.stringify(planned.data).length).toBeLessThan(2 * 200 * KIB);
    // A phase resumed from the record dispatches what the first one did.
    const parsed = parseProposalWithGraph({ actions });
    const resumed = planFromRecord(parsed.proposal.actions, parsed.graph.indexOf, planned.data);
    expect(resumed.steps.map((s) => s.call.parameters)).toEqual(steps.map((s) => ({ ...s.parameters, v: output })));
    expect(resumed.steps.every((s) => s.error === undefined)).toBe(true);
    await rt.close();
  });
});
