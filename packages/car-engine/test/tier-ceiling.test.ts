/**
 * `ExecuteOptions.tierCeiling` (a skill's deployment_tier): the proposal is
 * admitted and dispatched against the runtime's approval gate capped at
 * `min(granted, ceiling)`, on the same ledger; a ceiling the runtime cannot
 * enforce is refused, not ignored.
 */
import { ApprovalGate, InMemoryApprovalLedger, operationFingerprint } from "@car/policy";
import { isCarError, parseAction } from "@car/ir";
import { describe, expect, it } from "vitest";
import { Runtime } from "../src/index.ts";
import { tc } from "./helpers.ts";

const write = { id: "p", actions: [tc("w", "write_file", { parameters: { path: "n.txt", content: "x" } })] };

function runtime(gate?: ApprovalGate): Runtime {
  const rt = new Runtime(gate === undefined ? {} : { approvalGate: gate });
  rt.registerTool({ name: "write_file" }, () => "written");
  return rt;
}

describe("a tier ceiling on one proposal", () => {
  it("holds the proposal to min(granted, ceiling) at admission, and only that proposal", async () => {
    const ledger = new InMemoryApprovalLedger();
    const rt = runtime(new ApprovalGate({ ledger, sessionId: "s", grantedTier: "full_access" }));
    const capped = await rt.executeProposal(write, undefined, { tierCeiling: "read_only" });
    expect(capped.results[0]).toMatchObject({ status: "rejected", error: expect.stringContaining("read_only") });
    expect((await rt.executeProposal(write, undefined, { tierCeiling: "sandbox_edit" })).results[0]!.status).toBe("succeeded");
    expect((await rt.executeProposal(write)).results[0]!.status).toBe("succeeded");
    // The capped run escalates into the same ledger: an approval there lets it through.
    const action = parseAction(write.actions[0]);
    await ledger.record({
      fingerprint: operationFingerprint(action),
      required_tier: "sandbox_edit",
      decision: "approved",
      reviewer: "op",
      decided_at: Date.now(),
      expires_at: null,
      session_id: "s",
    });
    expect((await rt.executeProposal(write, undefined, { tierCeiling: "read_only" })).results[0]!.status).toBe("succeeded");
  });

  it("is refused where the runtime has no tiers to cap, and when it is not a tier", async () => {
    for (const [rt, tierCeiling] of [
      [runtime(), "read_only"],
      [runtime(new ApprovalGate({ ledger: new InMemoryApprovalLedger(), sessionId: "s" })), "root"],
    ] as const) {
      let error: unknown;
      try {
        await rt.executeProposal(write, undefined, { tierCeiling: tierCeiling as "read_only" });
      } catch (e) {
        error = e;
      }
      expect(isCarError(error, "invalid_params"), String(error)).toBe(true);
    }
  });
});
