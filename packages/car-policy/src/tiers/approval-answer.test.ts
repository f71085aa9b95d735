import { isCarError } from "@car/ir";
import { describe, expect, it } from "vitest";
import { toolAction } from "../test-helpers.ts";
import { approvalOutcome } from "./approval-answer.ts";
import { ApprovalGate } from "./approval-gate.ts";
import type { ApprovalAnswer } from "./approval-gate.ts";
import { InMemoryApprovalLedger } from "./approval-ledger.ts";

const send = toolAction("send_email", { to: "a@b.c" }, "s1");

describe("approvalOutcome", () => {
  it("maps the closed vocabulary onto the ledger's outcomes", () => {
    for (const w of ["approve", "approved"]) expect(approvalOutcome(w)).toBe("approved");
    for (const w of ["reject", "rejected", "deny", "denied"]) expect(approvalOutcome(w)).toBe("rejected");
  });

  it("refuses anything else with invalid_params naming the word", () => {
    for (const w of ["yes", "Approved", "", "allow", 1, null, undefined]) {
      let caught: unknown;
      try {
        approvalOutcome(w);
      } catch (error) {
        caught = error;
      }
      expect(isCarError(caught, "invalid_params")).toBe(true);
      if (typeof w === "string") expect((caught as Error).message).toContain(`'${w}'`);
    }
  });
});

describe("ApprovalGate answers", () => {
  async function answered(answer: unknown) {
    const ledger = new InMemoryApprovalLedger();
    const gate = new ApprovalGate({ ledger, sessionId: "s", approver: async () => answer as ApprovalAnswer });
    return { decision: await gate.authorize(send), records: await ledger.list() };
  }

  it("'approved' (the ledger's own word) approves, and the ledger says so", async () => {
    const { decision, records } = await answered({ decision: "approved", reviewer: "alice" });
    expect(decision.decision).toBe("allow");
    expect(records).toMatchObject([{ decision: "approved", reviewer: "alice" }]);
    expect((await answered("approved")).decision.decision).toBe("allow");
  });

  it("'denied' and 'rejected' refuse and are recorded as rejections", async () => {
    for (const word of ["denied", "rejected", "reject"]) {
      const { decision, records } = await answered({ decision: word, reviewer: "bob" });
      expect(decision.decision).toBe("deny");
      expect(records).toMatchObject([{ decision: "rejected", reviewer: "bob" }]);
    }
  });

  it("an answer outside the vocabulary is not recorded as anyone's decision", async () => {
    const { decision, records } = await answered({ decision: "ok", reviewer: "alice" });
    expect(decision.decision).toBe("deny");
    expect(decision.record).toBeUndefined();
    expect(decision.reason).toContain("not a decision");
    expect(records).toEqual([]);
  });
});
