/**
 * Property: for any sequence of proposals (writes, tool effects, aborts by
 * a failing tool), the state replayed from the stored log's committed
 * `state_changed` events equals the stored state — before and after a
 * reopen — and the chain verifies.
 */
import fc from "fast-check";
import { expect, it } from "vitest";
import type { ActionInput, ActionProposalInput, JsonValue } from "@car/ir";
import { Runtime } from "@car/engine";
import { replayStateChanges } from "@car/engine/durable";
import { sqlite } from "./sqlite-store.ts";
import { tempDatabase } from "@car/test-kit/temp-database";

const key = fc.constantFrom("a", "b", "c", "__proto__", "constructor");
const value: fc.Arbitrary<JsonValue> = fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<JsonValue>;
const action = fc.oneof(
  fc.record({ kind: fc.constant("write" as const), key, value }),
  fc.record({ kind: fc.constant("effect" as const), key, value }),
  fc.record({ kind: fc.constant("fail" as const) }),
);
const proposal = fc.array(action, { minLength: 1, maxLength: 4 });

type Step = { kind: "write" | "effect"; key: string; value: JsonValue } | { kind: "fail" };

function toProposal(id: string, steps: Step[]): ActionProposalInput {
  return {
    id,
    actions: steps.map((s, i): ActionInput => {
      const deps = i === 0 ? [] : [`s${i - 1}`];
      if (s.kind === "fail") return { id: `s${i}`, type: "tool_call", tool: "boom", parameters: {}, dependencies: deps };
      if (s.kind === "write") return { id: `s${i}`, type: "state_write", parameters: { key: s.key, value: s.value }, dependencies: deps };
      return { id: `s${i}`, type: "tool_call", tool: "ok", parameters: {}, expected_effects: { [s.key]: s.value }, dependencies: deps };
    }),
  };
}

it("the state replayed from the log equals the stored state", { timeout: 120_000 }, async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(proposal, { minLength: 1, maxLength: 6 }), async (proposals) => {
      const temp = tempDatabase();
      try {
        const store = sqlite(temp.db, { synchronous: "normal" });
        const rt = new Runtime({ store });
        rt.registerTool("ok", () => null);
        rt.registerTool("boom", () => {
          throw new Error("boom");
        });
        for (const [i, steps] of proposals.entries()) await rt.executeProposal(toProposal(`p${i}`, steps));
        expect(replayStateChanges(store.storedEvents())).toEqual(store.state.snapshot());
        await rt.close();
        const again = sqlite(temp.db);
        try {
          expect(replayStateChanges(again.storedEvents())).toEqual(again.state.snapshot());
          expect(again.verifyChain().ok).toBe(true);
        } finally {
          await again.close();
        }
      } finally {
        temp.remove();
      }
    }),
    { numRuns: 40 },
  );
});

/** What an operator or a host does between runs: direct writes, postures, approvals and their revocation. */
const operation = fc.oneof(
  fc.record({ op: fc.constant("set" as const), key, value }),
  fc.record({ op: fc.constant("delete" as const), key }),
  fc.record({
    op: fc.constant("posture" as const),
    agent: fc.constantFrom("bot", "ci"),
    posture: fc.constantFrom("deny", "always_allow", "require_approval"),
    tier: fc.constantFrom(null, "read_only" as const),
  }),
  fc.record({ op: fc.constant("clear" as const), agent: fc.constantFrom("bot", "ci"), tier: fc.constantFrom(null, "read_only" as const) }),
  fc.record({
    op: fc.constant("approve" as const),
    fingerprint: fc.constantFrom("f1", "f2"),
    uses: fc.option(fc.integer({ min: 1, max: 2 }), { nil: undefined }),
  }),
  fc.record({ op: fc.constant("spend" as const), fingerprint: fc.constantFrom("f1", "f2") }),
  fc.record({ op: fc.constant("revoke" as const), fingerprint: fc.constantFrom("f1", "f2") }),
);

it("every table the runtime trusts is what the log says, whatever runs and operations interleave", { timeout: 120_000 }, async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.oneof(
          proposal.map((p) => ({ run: p })),
          operation,
        ),
        { minLength: 1, maxLength: 10 },
      ),
      async (steps) => {
        const temp = tempDatabase();
        try {
          const store = sqlite(temp.db, { synchronous: "normal", auditKeyFile: `${temp.dir}/audit.key` });
          const rt = new Runtime({ store });
          rt.registerTool("ok", () => null);
          rt.registerTool("boom", () => {
            throw new Error("boom");
          });
          let now = 1_000;
          for (const [i, step] of steps.entries()) {
            now += 1_000;
            if ("run" in step) await rt.executeProposal(toProposal(`p${i % 3}`, step.run));
            else if (step.op === "set") store.state.set(step.key, step.value);
            else if (step.op === "delete") store.state.delete(step.key);
            else if (step.op === "posture") store.postures.set(step.agent, step.posture, step.tier, now);
            else if (step.op === "clear") store.postures.clear(step.agent, step.tier);
            else if (step.op === "approve")
              await store.approvals.record({
                fingerprint: step.fingerprint,
                decision: "approved",
                required_tier: "full_access",
                reviewer: "ops",
                decided_at: now,
                expires_at: null,
                ...(step.uses === undefined ? {} : { uses: step.uses }),
              });
            else {
              const standing = await store.approvals.latest(step.fingerprint, now);
              if (standing === undefined) continue;
              if (step.op === "spend") await store.approvals.consume(standing, now);
              else await store.approvals.revoke(standing.id!, "admin", now).catch(() => undefined);
            }
          }
          const report = store.verifyChain();
          expect(report.ok ? "" : report.broken.reason).toBe("");
          await rt.close();
        } finally {
          temp.remove();
        }
      },
    ),
    { numRuns: 40 },
  );
});
