import { parseProposalWithGraph } from "@car/ir";
import type { JsonObject } from "@car/ir";
import { describe, expect, it } from "vitest";
import { planCompensation } from "./compensation-plan.ts";
import type { CompensationStep } from "./compensation-plan.ts";
import { runCompensation } from "./compensation-run.ts";
import type { StepOutcome } from "./compensation-run.ts";

const { proposal, graph } = parseProposalWithGraph({
  actions: [
    {
      id: "insert",
      type: "tool_call",
      tool: "db_insert",
      reversibility: "compensable",
      compensation: { type: "tool", tool: "db_delete", parameters: { row: 1 } },
      max_retries: 2,
      failure_behavior: "retry",
      timeout_ms: 50,
    },
    { id: "push", type: "tool_call", tool: "git_push", reversibility: "compensable", compensation: { type: "action_ref", action_id: "unpush" } },
    { id: "unpush", type: "tool_call", tool: "git_force_push", dependencies: ["push"] },
    { id: "email", type: "tool_call", tool: "send_email" },
    { id: "note", type: "state_write", parameters: { key: "k", value: 1 }, reversibility: "reversible" },
  ],
});

function run(outcomes: Record<string, StepOutcome>, done: Set<string> = new Set()) {
  const events: [string, string | undefined, JsonObject][] = [];
  const dispatched: CompensationStep[] = [];
  // Completion order: note, insert, email, push.
  const plan = planCompensation(proposal.actions, [4, 0, 3, 1], graph.indexOf);
  const report = runCompensation(
    plan,
    {
      dispatch: async (step) => {
        dispatched.push(step);
        return outcomes[step.action_id] ?? { ok: true };
      },
      emit: (kind, id, data) => events.push([kind, id, data]),
    },
    done,
  );
  return { plan, report, events, dispatched };
}

describe("the compensation plan", () => {
  it("undoes in reverse completion order, a tool compensation as a call under the action's id with its timeout and retries", () => {
    const { plan } = run({});
    expect(plan.steps.map((s) => [s.action_id, s.call.tool])).toEqual([
      ["push", "git_force_push"],
      ["insert", "db_delete"],
    ]);
    const del = plan.steps[1]!.call;
    expect([del.id, del.parameters, del.timeout_ms, del.max_retries, del.failure_behavior]).toEqual(["insert", { row: 1 }, 50, 2, "retry"]);
    expect(plan.steps[0]!.ref_index).toBe(2);
    expect(plan.gaps).toEqual([{ action_id: "email", reason: "irreversible" }]);
  });
});

describe("runCompensation", () => {
  it("runs every step, records events, and names what remains", async () => {
    const { report, events } = run({});
    const r = await report;
    expect(r.compensated).toEqual(["push", "insert"]);
    expect(r.not_undone).toEqual([{ action_id: "email", reason: "the action is irreversible" }]);
    expect(events.map(([k, id]) => `${k}:${id ?? ""}`)).toEqual([
      "compensation_planned:",
      "compensation_started:push",
      "compensation_succeeded:push",
      "compensation_started:insert",
      "compensation_succeeded:insert",
      "compensation_completed:",
    ]);
    expect(events[0]![2]["steps"]).toEqual([
      { action_id: "push", tool: "git_force_push", parameters: {}, compensation_action: "unpush" },
      { action_id: "insert", tool: "db_delete", parameters: { row: 1 } },
    ]);
    expect(events.at(-1)![2]["external_effects_undone"]).toBe(false);
  });

  it("an ordinary failure is recorded and the next step still runs", async () => {
    const { report, dispatched } = run({ push: { ok: false, error: "remote refused", terminal: false } });
    const r = await report;
    expect(dispatched.map((s) => s.action_id)).toEqual(["push", "insert"]);
    expect(r.compensated).toEqual(["insert"]);
    expect(r.errors.get("push")).toBe("remote refused");
    expect(r.not_undone[0]).toEqual({ action_id: "push", reason: "its compensation failed: remote refused" });
  });

  it("a terminal failure stops the phase: later steps are not attempted, and say so", async () => {
    const { report, dispatched, events } = run({ push: { ok: false, error: "credentials revoked", terminal: true } });
    const r = await report;
    expect(dispatched.map((s) => s.action_id)).toEqual(["push"]);
    expect(r.compensated).toEqual([]);
    expect(r.errors.get("insert")).toBe("not attempted: the compensation of 'push' failed terminally");
    expect(events.find(([k]) => k === "compensation_failed")![2]).toEqual({ error: "credentials revoked", terminal: true });
  });

  it("a dispatch that throws is a failed step, not a crashed phase", async () => {
    const plan = planCompensation(proposal.actions, [0], graph.indexOf);
    const r = await runCompensation(plan, { dispatch: () => Promise.reject(new Error("boom")), emit: () => {} });
    expect(r.errors.get("insert")).toBe("internal error: boom");
  });

  it("a resumed phase skips the steps already done", async () => {
    const { report, dispatched, events } = run({}, new Set(["push"]));
    expect((await report).compensated).toEqual(["push", "insert"]);
    expect(dispatched.map((s) => s.action_id)).toEqual(["insert"]);
    expect(events.filter(([k]) => k === "compensation_started").map(([, id]) => id)).toEqual(["insert"]);
  });
});
