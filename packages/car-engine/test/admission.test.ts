/**
 * Admission as one stage (src/admission/admit.ts): the host's guard comes
 * first — a proposal it refuses leaves nothing on the record and asks no
 * approver — and what it holds for the run is released exactly once,
 * however the run or admission itself ends.
 */
import { CarError } from "@car/ir";
import { ApprovalGate } from "@car/policy";
import { describe, expect, it } from "vitest";
import { type AdmissionGuard, manualTimers, Runtime } from "../src/index.ts";
import { tc } from "./helpers.ts";

function guarded(guard: AdmissionGuard, approver?: () => Promise<"approve" | "deny">, posture?: () => Promise<undefined>): { rt: Runtime; asked: string[] } {
  const timers = manualTimers(1_700_000_000_000);
  const base = new Runtime({ clock: timers, timers });
  const asked: string[] = [];
  const approvalGate = new ApprovalGate({
    ledger: base.approvals,
    sessionId: "s",
    clock: timers,
    timers,
    grantedTier: "read_only",
    ...(approver !== undefined
      ? {
          approver: (req) => {
            asked.push(req.action.id);
            return approver();
          },
        }
      : {}),
    ...(posture !== undefined ? { posture } : {}),
  });
  const rt = new Runtime({ clock: timers, timers, store: base.store, approvalGate, admission: guard });
  rt.registerTool({ name: "write_file" }, () => "written");
  return { rt, asked };
}

describe("admission", () => {
  it("the host's guard refuses first: nothing is logged and no approver is asked", async () => {
    const { rt, asked } = guarded(
      () => {
        throw new CarError("invalid_params", "not for this tenant");
      },
      async () => "approve",
    );
    await expect(rt.executeProposal({ actions: [tc("w", "write_file")] })).rejects.toThrow("not for this tenant");
    expect(asked).toEqual([]);
    expect(rt.events.query()).toEqual([]);
  });

  it("the guard's hold is released once when the run ends, and its caller wraps the run's", async () => {
    const released: string[] = [];
    const { rt } = guarded(
      (p) => ({
        wrapCaller: (caller) => (call, signal) => caller({ ...call, params: { ...call.params, wrapped: true } }, signal),
        release: () => released.push(p.id),
      }),
      async () => "approve",
    );
    rt.registerTool({ name: "write_file" }); // no handler: its calls go to the run's caller
    const seen: unknown[] = [];
    const r = await rt.executeProposal({ id: "p", actions: [tc("w", "write_file")] }, (json) => {
      seen.push(JSON.parse(json).params);
      return JSON.stringify({ result: "ok" });
    });
    expect(r.results[0]!.status).toBe("succeeded");
    expect(seen).toEqual([{ wrapped: true }]);
    expect(released).toEqual(["p"]);
  });

  it("the guard's hold is released when admission itself fails after it (the postures cannot be read)", async () => {
    const released: string[] = [];
    const { rt } = guarded(
      (p) => ({ release: () => released.push(p.id) }),
      undefined,
      async () => {
        throw new Error("posture store offline");
      },
    );
    await expect(rt.executeProposal({ id: "p", actions: [tc("w", "write_file")] })).rejects.toThrow("posture store offline");
    expect(released).toEqual(["p"]);
    // The record had begun: the proposal was received under its run id before the approver was asked.
    expect(rt.events.query({ kinds: ["proposal_received"] })).toHaveLength(1);
  });
});
