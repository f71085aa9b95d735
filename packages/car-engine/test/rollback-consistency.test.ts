/**
 * `verify`'s rollback contract, `permission.classify` and the engine's
 * compensation plan read the same fact three ways; over random proposals
 * they must agree: verify's `missing_compensation` gaps are exactly the
 * forward actions classify flags, the declared contract is the same, and the
 * gaps the engine would report are the ones verify predicts.
 */
import { parseProposalWithGraph } from "@car/ir";
import { compensationActionIndices } from "@car/ir/internal";
import { classifyProposal } from "@car/policy";
import { verify } from "@car/verify";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { planCompensation } from "../src/compensation/compensation-plan.ts";

const reversibility = fc.constantFrom("reversible", "compensable", "irreversible", undefined);
const compensation = (n: number) =>
  fc.oneof(
    fc.constant(undefined),
    fc.record({ type: fc.constant("tool"), tool: fc.constantFrom("undo", "refund") }),
    fc.record({ type: fc.constant("action_ref"), action_id: fc.nat(n + 1).map((k) => `a${k}`) }),
  );
const proposals = fc.integer({ min: 0, max: 8 }).chain((n) =>
  fc.array(fc.record({ reversibility, compensation: compensation(n) }), { minLength: n, maxLength: n }).map((rows) => ({
    actions: rows.map((r, i) => ({
      id: `a${i}`,
      type: "tool_call",
      tool: `t${i % 3}`,
      ...(r.reversibility === undefined ? {} : { reversibility: r.reversibility }),
      ...(r.compensation === undefined ? {} : { compensation: r.compensation }),
    })),
  })),
);

describe("rollback contract consistency", () => {
  it("verify, permission.classify and the compensation plan agree", () => {
    fc.assert(
      fc.property(proposals, (raw) => {
        const { proposal, graph } = parseProposalWithGraph(raw);
        const report = verify(proposal).rollback_contract!;
        const classified = classifyProposal(proposal);
        expect(report.declared).toBe(classified.declared_rollback_contract);
        const forward = compensationActionIndices(proposal.actions);
        const flagged = classified.classifications.filter((c, i) => !forward.has(i) && c.missing_compensation).map((c) => c.action_id);
        expect(report.not_undoable.filter((g) => g.reason === "missing_compensation").map((g) => g.action_id)).toEqual(flagged);
        // If everything forward succeeded (in declaration order), the engine's gaps are verify's, reversed.
        const completed = proposal.actions.map((_, i) => i).filter((i) => !forward.has(i));
        const plan = planCompensation(proposal.actions, completed, graph.indexOf);
        expect([...plan.gaps].reverse()).toEqual(report.not_undoable);
        expect(report.fully_undoable).toBe(plan.gaps.length === 0);
      }),
    );
  });
});
