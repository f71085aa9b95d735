/**
 * The audit covers every table it trusts: a row of the approval ledger, a
 * posture, a proposal's status or a transition, edited in the database by
 * a writer without the audit key, is reported by `verifyChain` — and a
 * forged approval or posture is not honoured at run time. The harness does
 * the editing (`StoreHarness.tamper`), since only the backend knows its
 * tables; the suite says what must follow.
 */
import assert from "node:assert/strict";
import type { ActionInput } from "@car/ir";
import { ApprovalGate, operationFingerprint } from "@car/policy";
import { type DurableRuntimeStore, postureLookup, Runtime } from "@car/engine";
import { parseProposal } from "@car/ir";
import { assertHolds, assertRejectsWithCode, write } from "./assertions.ts";
import { type MaybePromise, START, type StoreCheck, type StoreCheckContext, type StoreTamper } from "./check.ts";

/** An operation that needs `full_access`, so it runs only on a recorded approval. */
const DEPLOY: ActionInput = { id: "d", type: "tool_call", tool: "deploy_service", parameters: { target: "prod" } };

/** The store, its tamper hooks, and a runtime over it whose approval gate reads the store's ledger and postures for agent `bot`. */
async function gated(t: StoreCheckContext): Promise<{ store: DurableRuntimeStore; tamper: StoreTamper; rt: Runtime; deployed: () => number }> {
  const store = (await t.open()) as DurableRuntimeStore;
  const tamper = t.tamper;
  assert.ok(tamper !== undefined, "the harness offers no tamper hooks");
  const approvalGate = new ApprovalGate({
    ledger: store.approvals,
    sessionId: "agent:bot",
    agentId: "bot",
    clock: t.clock,
    posture: postureLookup(store.postures, "bot"),
  });
  const rt = new Runtime({ store, clock: t.clock, approvalGate });
  let calls = 0;
  rt.registerTool("deploy_service", () => {
    calls++;
    return "deployed";
  });
  rt.registerTool("boom", () => {
    throw new Error("boom");
  });
  return { store, tamper, rt, deployed: () => calls };
}

/** Runs `actions`; whether it is refused outright (a CarError) or its actions rejected, nothing may run. */
async function refused(rt: Runtime, id: string, actions: ActionInput[]): Promise<void> {
  let statuses: string[];
  try {
    statuses = (await rt.executeProposal({ id, actions })).results.map((r) => r.status);
  } catch (error) {
    assert.equal((error as { code?: unknown }).code, "chain_broken", `refused with ${String(error)}`);
    return;
  }
  assert.ok(
    statuses.every((s) => s === "rejected" || s === "skipped"),
    `expected nothing to run, got ${statuses.join(", ")}`,
  );
}

async function assertBroken(store: DurableRuntimeStore, table: string): Promise<void> {
  const report = await store.verifyChain();
  assert.equal(report.ok, false, `verifyChain reports the edited ${table} row`);
  if (!report.ok) assert.equal(report.broken.table, table, `the break names the ${table} table: ${report.broken.reason}`);
}

/** Records a standing approval of DEPLOY (with `uses` when given); returns its fingerprint. */
async function approveDeploy(store: DurableRuntimeStore, uses?: number): Promise<string> {
  const [action] = parseProposal({ actions: [DEPLOY] }).actions;
  const fingerprint = operationFingerprint(action!);
  await store.approvals.record({
    fingerprint,
    decision: "approved",
    required_tier: "full_access",
    reviewer: "ops",
    decided_at: START,
    expires_at: null,
    ...(uses === undefined ? {} : { uses }),
  });
  return fingerprint;
}

/**
 * Rows rolled back or deleted keep valid seals (or leave none to check): the
 * run-time read must still refuse them, from the log's newest event about
 * each (row-currency.ts), and verification must report them.
 */
const ROLLBACK_CHECKS: readonly StoreCheck[] = [
  {
    name: "durable: an older approval row restored with more uses left is not honoured at run time",
    durable: ["verifyChain", "tamper"],
    async run(t) {
      const { store, tamper, rt, deployed } = await gated(t);
      await approveDeploy(store, 2);
      assertHolds((await rt.executeProposal({ id: "first", actions: [DEPLOY] })).results[0]!, { status: "succeeded" });
      await tamper.saveRows();
      assertHolds((await rt.executeProposal({ id: "second", actions: [DEPLOY] })).results[0]!, { status: "succeeded" });
      await refused(rt, "spent", [DEPLOY]);
      assert.equal(deployed(), 2);
      await tamper.restoreRows();
      await refused(rt, "restored", [DEPLOY]);
      assert.equal(deployed(), 2, "the restored copy of the approval spent a use twice");
      await assertBroken(store, "approvals");
    },
  },
  {
    name: "durable: a revoked approval restored with its old seal is not honoured at run time",
    durable: ["verifyChain", "tamper"],
    async run(t) {
      const { store, tamper, rt, deployed } = await gated(t);
      await approveDeploy(store);
      await tamper.saveRows();
      const [grant] = await store.approvals.grants(START);
      await store.approvals.revoke(grant!.id, "ops", START + 1);
      await refused(rt, "revoked", [DEPLOY]);
      await tamper.restoreRows();
      await refused(rt, "restored", [DEPLOY]);
      assert.equal(deployed(), 0, "the restored approval outlived its revocation");
      await assertBroken(store, "approvals");
    },
  },
  {
    name: "durable: a deleted newer decision does not hand the answer back to an older approval",
    durable: ["verifyChain", "tamper"],
    async run(t) {
      const { store, tamper, rt, deployed } = await gated(t);
      const fingerprint = await approveDeploy(store);
      await store.approvals.record({
        fingerprint,
        decision: "rejected",
        required_tier: "full_access",
        reviewer: "ops",
        decided_at: START + 1,
        expires_at: null,
      });
      await refused(rt, "rejected", [DEPLOY]);
      await tamper.deleteNewestApproval(fingerprint);
      await assertRejectsWithCode(
        Promise.resolve().then(() => store.approvals.latest(fingerprint, START + 2)),
        "chain_broken",
      );
      await refused(rt, "deleted", [DEPLOY]);
      assert.equal(deployed(), 0, "deleting the rejection revived the approval");
      await assertBroken(store, "approvals");
    },
  },
  {
    name: "durable: an older posture restored with its old seal is not honoured at run time",
    durable: ["verifyChain", "postures", "tamper"],
    async run(t) {
      const { store, tamper, rt, deployed } = await gated(t);
      await store.postures.set("bot", "always_allow", null, START);
      await tamper.saveRows();
      await store.postures.set("bot", "deny", null, START + 1);
      await refused(rt, "denied", [DEPLOY]);
      await tamper.restoreRows();
      await assertRejectsWithCode(
        Promise.resolve().then(() => store.postures.resolve("bot", "full_access")),
        "chain_broken",
      );
      await refused(rt, "restored", [DEPLOY]);
      assert.equal(deployed(), 0, "the restored posture let the deploy run");
      await assertBroken(store, "postures");
    },
  },
];

/** A use-limited approval is spent at admission, atomically: runs racing on two stores of one database get exactly `uses` executions. */
const USES_CHECK: StoreCheck = {
  name: "durable: concurrent runs on two stores of one database spend a use-limited approval exactly `uses` times",
  durable: ["verifyChain"],
  async run(t) {
    const one = await gated(t);
    const two = await gated(t);
    await approveDeploy(one.store, 2);
    const runs = [one, two, one, two, one, two].map((side, i) => side.rt.executeProposal({ id: `race-${i}`, actions: [DEPLOY] }));
    const statuses = (await Promise.allSettled(runs)).map((r) => (r.status === "fulfilled" ? r.value.results[0]!.status : `threw ${String(r.reason)}`));
    assert.equal(one.deployed() + two.deployed(), 2, `two uses allowed ${one.deployed() + two.deployed()} deploys (${statuses.join(", ")})`);
    assert.equal(statuses.filter((s) => s === "succeeded").length, 2, statuses.join(", "));
    assert.deepStrictEqual(
      one.store.events.query({ kinds: ["approval_used"] }).map((e) => e.data["uses_left"]),
      [1, 0],
    );
    assertHolds(await one.store.verifyChain(), { ok: true });
  },
};

/**
 * The transition record is checked key by key against the log (a forged,
 * edited or deleted row is reported), and a delete of an absent key is no
 * change on any store: no version, no record.
 */
const TRANSITION_CHECKS: readonly StoreCheck[] = [
  ...(
    [
      ["an edited", (tamper) => tamper.editTransition("k", 99)],
      ["a deleted", (tamper) => tamper.deleteTransition("k")],
      ["a forged", (tamper) => tamper.forgeTransition("k", 99)],
    ] as const satisfies readonly (readonly [string, (tamper: StoreTamper) => MaybePromise<void>])[]
  ).map(
    ([which, edit]): StoreCheck => ({
      name: `durable: ${which} transition is reported by verification`,
      durable: ["verifyChain", "tamper"],
      async run(t) {
        const { rt, store, tamper } = await gated(t);
        await rt.executeProposal({ id: "p1", actions: [write("a", "k", 1)] });
        await rt.executeProposal({ id: "p2", actions: [write("a", "k", 2)] });
        assertHolds(await store.verifyChain(), { ok: true });
        await edit(tamper);
        await assertBroken(store, "transitions");
      },
    }),
  ),
  {
    name: "durable: runtimes committing to different keys of one database leave a record that verifies",
    durable: ["verifyChain"],
    async run(t) {
      const one = await gated(t);
      const two = await gated(t);
      // Interleaved commits of two runtimes: each key's record is in its own commit order, whatever the ids across keys.
      const runs = Array.from({ length: 8 }, (_, i) =>
        (i % 2 === 0 ? one : two).rt.executeProposal({ id: `w-${i}`, actions: [write("a", `key-${i % 3}`, i), write("b", `key-${(i + 1) % 3}`, i)] }),
      );
      await Promise.allSettled(runs);
      assertHolds(await one.store.verifyChain(), { ok: true });
    },
  },
  {
    name: "durable: deleting a key another runtime already deleted changes nothing: no version, no transition",
    durable: ["verifyChain"],
    async run(t) {
      const writer = await t.open();
      writer.state.set("k", 1);
      await writer.close?.();
      const stale = await t.open();
      assert.equal(stale.state.exists("k"), true);
      const deleter = await t.open();
      assert.notEqual(deleter.state.delete("k"), null);
      await deleter.close?.();
      // `stale` still holds k where its cache lags (PostgreSQL); the store finds it absent.
      stale.state.delete("k");
      await stale.close?.();
      const fresh = (await t.open()) as DurableRuntimeStore;
      assert.equal(fresh.state.exists("k"), false);
      assert.equal(fresh.state.version("k"), 2, "a delete of an absent key bumped its version");
      assertHolds(await fresh.verifyChain(), { ok: true });
      const changes = fresh.events.query({ kinds: ["state_changed"] }).map((e) => [e.data["op"], e.data["version"]]);
      assert.deepStrictEqual(changes, [
        ["set", 1],
        ["delete", 2],
      ]);
    },
  },
];

export const TABLE_CHECKS: readonly StoreCheck[] = [
  ...ROLLBACK_CHECKS,
  USES_CHECK,
  ...TRANSITION_CHECKS,
  {
    name: "durable: a forged approvals row is reported by verification and approves nothing",
    durable: ["verifyChain", "tamper"],
    async run(t) {
      const { store, tamper, rt, deployed } = await gated(t);
      const [action] = parseProposal({ actions: [DEPLOY] }).actions;
      await refused(rt, "before", [DEPLOY]);
      assertHolds(await store.verifyChain(), { ok: true });
      await tamper.forgeApproval(operationFingerprint(action!));
      await assertBroken(store, "approvals");
      await assertRejectsWithCode(
        Promise.resolve().then(() => store.approvals.latest(operationFingerprint(action!), START)),
        "chain_broken",
      );
      await refused(rt, "after", [DEPLOY]);
      assert.equal(deployed(), 0, "the forged approval let the deploy run");
    },
  },
  {
    name: "durable: a spent approval stays spent across a reopen, and when its revocation row is deleted",
    durable: ["verifyChain", "tamper"],
    async run(t) {
      const first = await gated(t);
      const [action] = parseProposal({ actions: [DEPLOY] }).actions;
      const fingerprint = operationFingerprint(action!);
      await first.store.approvals.record({
        fingerprint,
        decision: "approved",
        required_tier: "full_access",
        reviewer: "ops",
        decided_at: START,
        expires_at: null,
        uses: 1,
      });
      assertHolds((await first.rt.executeProposal({ id: "once", actions: [DEPLOY] })).results[0]!, { status: "succeeded" });
      assert.equal(first.deployed(), 1);
      await t.closeAll();
      // A restart: the use was spent in the database, not in the runtime.
      const { store, tamper, rt, deployed } = await gated(t);
      await refused(rt, "twice", [DEPLOY]);
      await tamper.unrevokeApprovals();
      await assertBroken(store, "approvals");
      await refused(rt, "thrice", [DEPLOY]);
      assert.equal(deployed(), 0, "the spent use was spent again");
    },
  },
  {
    name: "durable: an edited posture is reported by verification and not honoured",
    durable: ["verifyChain", "postures", "tamper"],
    async run(t) {
      const { store, tamper, rt, deployed } = await gated(t);
      await store.postures.set("bot", "deny", null, START);
      await tamper.editPosture("bot", "always_allow");
      await assertBroken(store, "postures");
      await assertRejectsWithCode(
        Promise.resolve().then(() => store.postures.resolve("bot", "full_access")),
        "chain_broken",
      );
      await refused(rt, "posture", [DEPLOY]);
      assert.equal(deployed(), 0, "the edited posture let the deploy run");
    },
  },
  {
    name: "durable: an edited proposal status is reported by verification",
    durable: ["verifyChain", "tamper"],
    async run(t) {
      const { rt, store, tamper } = await gated(t);
      await rt.executeProposal({ id: "p1", actions: [write("a", "k", 1)] });
      const aborted = await rt.executeProposal({ id: "p2", actions: [write("a", "j", 1), { id: "x", type: "tool_call", tool: "boom", parameters: {} }] });
      assert.deepStrictEqual(
        aborted.results.map((r) => r.status),
        ["succeeded", "failed"],
      );
      assertHolds(await store.verifyChain(), { ok: true });
      await tamper.editProposalStatus("p2", "committed");
      await assertBroken(store, "proposals");
    },
  },
];
