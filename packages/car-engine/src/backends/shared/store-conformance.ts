/**
 * The RuntimeStore conformance suite: the behaviour every store backend
 * (in-memory, SQLite, PostgreSQL, or a third party's) must show, written
 * without a test framework so a store author runs it from the published
 * package (`@car/engine/store-conformance`, re-exported by
 * `@car/conformance/store`) under any runner. The core checks go through a
 * real `Runtime`; the durable checks (reopen, hash chain, interruption,
 * ledger, postures) run only for a harness that declares `durable` and a
 * store offering the part they check — otherwise they are reported as
 * skipped with the reason, never as passed.
 */
import assert from "node:assert/strict";
import { jsonEquals, manualClock } from "@car/ir";
import type { ActionInput, Clock, JsonValue } from "@car/ir";
import type { ApprovalRecord } from "@car/policy";
import type { CarEvent } from "../../events/event.ts";
import { Runtime } from "../../runtime.ts";
import type { RuntimeStore } from "../../store/runtime-store.ts";
import type { ChainReport } from "./chain-verify.ts";
import type { DurableRuntimeStore } from "./durable-store.ts";
import { GENESIS_HASH } from "./event-hash.ts";
import { replayStateChanges } from "./state-replay.ts";

type MaybePromise<T> = T | Promise<T>;

/** How the suite reaches a backend: a fresh data set per check, opened as often as a check needs. */
export interface StoreHarness {
  /** True when a later `open` sees what an earlier one wrote. Durable checks are skipped (with this reason) otherwise. */
  durable: boolean;
  /** A store over this harness's data; a durable backend opens the same data again on every call. */
  open(clock: Clock): MaybePromise<RuntimeStore>;
  /** Deletes the data (temporary files, schemas). Stores are closed by the suite first. */
  dispose(): MaybePromise<void>;
}

/** What a check is given: the harness's stores, a manual clock, and a runtime over a new store. */
export interface StoreCheckContext {
  readonly clock: ReturnType<typeof manualClock>;
  open(): Promise<RuntimeStore>;
  /** Closes every store this check opened (a durable check then reopens). */
  closeAll(): Promise<void>;
  /** A `Runtime` over a newly opened store, with tools `ok` (answers "done") and `boom` (throws). */
  runtime(): Promise<{ rt: Runtime; store: RuntimeStore }>;
}

/** What a durable check needs beyond `durable: true`; absent parts make it skip with the reason. */
type DurablePart = "verifyChain" | "beginProposal" | "recover" | "postures";

export interface StoreCheck {
  name: string;
  /** Set for checks of durability; the parts of the store they use. */
  durable?: readonly DurablePart[];
  run(t: StoreCheckContext): Promise<void>;
}

export type StoreCheckStatus = "passed" | "failed" | "skipped";

export interface StoreCheckResult {
  name: string;
  status: StoreCheckStatus;
  /** Why a check was skipped. */
  reason?: string;
  /** What failed (the assertion or error message). */
  error?: string;
  duration_ms: number;
}

export interface StoreConformanceReport {
  store: string;
  passed: number;
  failed: number;
  skipped: number;
  results: StoreCheckResult[];
}

const START = Date.parse("2026-01-01T00:00:00.000Z");

const write = (id: string, key: string, value: JsonValue, extra: Partial<ActionInput> = {}): ActionInput => ({
  id,
  type: "state_write",
  parameters: { key, value },
  ...extra,
});

/** Asserts that `actual` holds `expected`'s keys with equal values (objects compared the same way, recursively). */
function assertHolds(actual: unknown, expected: Record<string, unknown>, path = "value"): void {
  assert.ok(actual !== null && typeof actual === "object", `${path} is not an object: ${JSON.stringify(actual)}`);
  for (const [key, want] of Object.entries(expected)) {
    const got: unknown = (actual as Record<string, unknown>)[key];
    if (want !== null && typeof want === "object" && !Array.isArray(want)) assertHolds(got, want as Record<string, unknown>, `${path}.${key}`);
    else assert.deepStrictEqual(got, want, `${path}.${key}`);
  }
}

/** Asserts that `actual` and `expected` are the same JSON (a store may hand back prototype-free objects; that is not a difference). */
function assertSameJson(actual: unknown, expected: unknown, message: string): void {
  assert.ok(jsonEquals(actual, expected), `${message}: ${JSON.stringify(actual)} is not ${JSON.stringify(expected)}`);
}

/** Asserts that `promise` rejects with a CarError of `code`. */
async function assertRejectsWithCode(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (err: unknown) => (err as { code?: unknown }).code === code);
}

export const STORE_CHECKS: readonly StoreCheck[] = [
  {
    name: "keeps versioned state: a delete keeps the version, keys stay in first-write order, restore writes the difference",
    async run(t) {
      const { state } = await t.open();
      assert.equal(state.set("a", { n: 1 }).version, 1);
      state.set("b", [1, 2]);
      state.set("a", { n: 2 });
      assert.equal(state.version("a"), 2);
      assertHolds(state.delete("a"), { key: "a", previous_version: 2, version: 3, mutation: { op: "delete" } });
      assert.equal(state.delete("a"), null);
      assert.equal(state.exists("a"), false);
      assert.equal(state.version("a"), 3);
      state.set("a", 7);
      assert.equal(state.version("a"), 4);
      assert.deepStrictEqual(state.keys(), ["b", "a"]);
      const changes = state.restore({ a: 7, c: "new" });
      assert.deepStrictEqual(
        changes.map((c) => [c.key, c.mutation.op]),
        [
          ["b", "delete"],
          ["c", "set"],
        ],
      );
      assert.deepStrictEqual({ ...state.snapshot() }, { a: 7, c: "new" });
      assert.deepStrictEqual(
        state.entries().map((e) => ({ ...e })),
        [
          { key: "a", value: 7, version: 4 },
          { key: "c", value: "new", version: 1 },
        ],
      );
      assert.deepStrictEqual(
        state.transitions({ key: "a" }).map((c) => c.version),
        [1, 2, 3, 4],
      );
    },
  },
  {
    name: "copies values in and out, and treats __proto__ and constructor as ordinary keys",
    async run(t) {
      const { state } = await t.open();
      const value = JSON.parse('{"__proto__": {"x": 1}, "constructor": 2}') as JsonValue;
      state.set("__proto__", value);
      const read = state.get("__proto__") as Record<string, JsonValue>;
      assert.deepStrictEqual(Object.keys(read), ["__proto__", "constructor"]);
      (read["constructor"] as unknown) = 3;
      assert.equal((state.get("__proto__") as Record<string, JsonValue>)["constructor"], 2);
      assert.deepStrictEqual(Object.keys(state.snapshot()), ["__proto__"]);
      assert.equal(({} as Record<string, unknown>)["x"], undefined);
    },
  },
  {
    name: "commits a proposal's writes with attribution, and records its events in order",
    async run(t) {
      const { rt } = await t.runtime();
      const result = await rt.executeProposal({
        id: "p1",
        actions: [write("w", "k", 1), { id: "t", type: "tool_call", tool: "ok", parameters: {}, expected_effects: { done: true } }],
      });
      assert.deepStrictEqual(
        result.results.map((r) => r.status),
        ["succeeded", "succeeded"],
      );
      assert.deepStrictEqual({ ...rt.state.snapshot() }, { k: 1, done: true });
      assert.deepStrictEqual(
        rt.state.transitions({ proposal_id: "p1" }).map((c) => [c.key, c.action_id]),
        [
          ["k", "w"],
          ["done", "t"],
        ],
      );
      const events = rt.events.query({ proposal_id: "p1" });
      assert.equal(events[0]!.kind, "proposal_received");
      assert.equal(events.at(-1)!.kind, "proposal_completed");
      assert.deepStrictEqual(
        events.map((e) => e.seq),
        events.map((_, i) => events[0]!.seq + i),
      );
      assert.deepStrictEqual(
        rt.events.query({ proposal_id: "p1", kinds: ["state_changed"] }).map((e) => e.data["key"]),
        ["k", "done"],
      );
    },
  },
  {
    name: "answers queries by kind, proposal, action, time, data, order, limit and after_seq, and counts the same way",
    async run(t) {
      const { rt } = await t.runtime();
      await rt.executeProposal({ id: "p1", actions: [{ id: "a", type: "tool_call", tool: "ok", parameters: {} }] });
      t.clock.advance(60_000);
      const middle = new Date(t.clock.now()).toISOString();
      await rt.executeProposal({ id: "p2", actions: [{ id: "a", type: "tool_call", tool: "ok", parameters: {} }] });
      assert.deepStrictEqual(
        rt.events.query({ kinds: ["proposal_received"] }).map((e) => e.proposal_id),
        ["p1", "p2"],
      );
      assert.equal(rt.events.query({ proposal_id: "p2", action_id: "a", kinds: ["action_succeeded"] }).length, 1);
      assert.ok(
        rt.events.query({ since: middle }).every((e) => e.proposal_id === "p2"),
        "since",
      );
      assert.ok(
        rt.events.query({ until: middle }).every((e) => e.proposal_id === "p1"),
        "until",
      );
      assertHolds(rt.events.query({ data_matches: { tool: "ok" }, order: "desc", limit: 1 })[0], { proposal_id: "p2", kind: "action_succeeded" });
      const all = rt.events.query();
      const cut = all[2]!.seq;
      assert.deepStrictEqual(
        rt.events.query({ after_seq: cut }).map((e) => e.seq),
        all.filter((e) => e.seq > cut).map((e) => e.seq),
      );
      assert.equal(rt.events.count(), all.length);
      assert.equal(rt.events.count({ kinds: ["action_succeeded"] }), 2);
      assert.equal(rt.events.count({ data_matches: { tool: "ok" }, limit: 1 }), 1);
      assert.deepStrictEqual(
        rt.events.query({ order: "desc" }).map((e) => e.seq),
        all.map((e) => e.seq).reverse(),
      );
    },
  },
  {
    name: "leaves state untouched by an aborted proposal and records the rollback",
    async run(t) {
      const { rt } = await t.runtime();
      rt.state.set("k", "before");
      const result = await rt.executeProposal({
        id: "p",
        actions: [write("w", "k", "during"), { id: "b", type: "tool_call", tool: "boom", parameters: {}, dependencies: ["w"] }],
      });
      assertHolds(result.results[0], { rolled_back: true });
      assert.deepStrictEqual({ ...rt.state.snapshot() }, { k: "before" });
      assert.equal(rt.state.version("k"), 1);
      assert.equal(rt.events.query({ proposal_id: "p", kinds: ["proposal_completed"] })[0]!.data["outcome"], "rolled_back");
      assert.equal(rt.events.count({ proposal_id: "p", kinds: ["state_changed"] }), 0);
    },
  },
  {
    name: "feeds subscribers live",
    async run(t) {
      const { rt } = await t.runtime();
      const feed = rt.events.subscribe({ filter: { kinds: ["proposal_completed"] } });
      const next = feed.next();
      await rt.executeProposal({ id: "p", actions: [write("w", "k", 1)] });
      assertHolds((await next).value, { kind: "proposal_completed", proposal_id: "p" });
      await feed.return!();
    },
  },
  {
    name: "keeps the state equal to the replay of its committed state_changed events",
    async run(t) {
      const { rt } = await t.runtime();
      await rt.executeProposal({ id: "p1", actions: [write("a", "x", 1), write("b", "y", { z: [1] })] });
      await rt.executeProposal({ id: "p2", actions: [write("a", "x", 2), { id: "b", type: "tool_call", tool: "boom", parameters: {}, dependencies: ["a"] }] });
      await rt.executeProposal({ id: "p3", actions: [write("a", "y", null)] });
      assert.deepStrictEqual({ ...replayStateChanges(rt.events.query()) }, { ...rt.state.snapshot() });
    },
  },
  {
    name: "durable: survives a reopen: state, versions, events; numbering continues",
    durable: [],
    async run(t) {
      const { rt } = await t.runtime();
      await rt.executeProposal({ id: "p1", actions: [write("a", "k", 1), write("b", "k", 2)] });
      const before = rt.events.query();
      await t.closeAll();
      const { rt: again } = await t.runtime();
      assert.deepStrictEqual({ ...again.state.snapshot() }, { k: 2 });
      assert.equal(again.state.version("k"), 2);
      assertSameJson(again.events.query(), before, "the events after the reopen");
      await again.executeProposal({ id: "p2", actions: [write("a", "k", 3)] });
      assert.equal(again.events.query({ proposal_id: "p2" })[0]!.seq, before.at(-1)!.seq + 1);
    },
  },
  {
    name: "durable: chains every event to the one before it and verifies",
    durable: ["verifyChain"],
    async run(t) {
      const { rt, store } = await t.runtime();
      await rt.executeProposal({ id: "p1", actions: [write("a", "k", 1)] });
      await rt.executeProposal({ id: "p2", actions: [write("a", "k", 2)] });
      const events: CarEvent[] = rt.events.query();
      assert.equal(events[0]!.prev_hash, GENESIS_HASH);
      for (let i = 1; i < events.length; i++) assert.equal(events[i]!.prev_hash, events[i - 1]!.hash, `event ${events[i]!.seq}'s prev_hash`);
      const report: ChainReport = await (store as DurableRuntimeStore).verifyChain();
      assertHolds(report, { ok: true, verified: events.length, head: { seq: events.at(-1)!.seq, hash: events.at(-1)!.hash } });
    },
  },
  {
    name: "durable: marks a proposal left executing by a stopped process as interrupted, state untouched",
    durable: ["beginProposal", "recover"],
    async run(t) {
      const store = await t.open();
      store.state.set("k", "before");
      await store.beginProposal!({ proposal_id: "lost", timestamp: new Date(t.clock.now()).toISOString() });
      await t.closeAll();
      const again = await t.open();
      const rt2 = new Runtime({ store: again, clock: t.clock });
      assert.deepStrictEqual(await rt2.recover(), [{ proposal_id: "lost", timestamp: new Date(START).toISOString() }]);
      assert.deepStrictEqual(await rt2.recover(), []);
      assert.deepStrictEqual({ ...again.state.snapshot() }, { k: "before" });
      assert.deepStrictEqual(
        again.events.query({ proposal_id: "lost" }).map((e) => e.kind),
        ["proposal_interrupted"],
      );
    },
  },
  {
    name: "durable: keeps approvals and standing grants across a reopen; a revoked grant no longer answers",
    durable: [],
    async run(t) {
      const store = (await t.open()) as DurableRuntimeStore;
      const base: ApprovalRecord = {
        fingerprint: "f1",
        decision: "approved",
        required_tier: "full_access",
        reviewer: "conn:1",
        decided_at: START,
        expires_at: null,
        action_id: "a",
      };
      await store.approvals.record(base);
      await store.approvals.record({ ...base, fingerprint: "f2", decision: "rejected" });
      await store.approvals.record({ ...base, fingerprint: "f3", expires_at: START + 1000 });
      await t.closeAll();
      const again = (await t.open()) as DurableRuntimeStore;
      assertHolds(await again.approvals.latest("f1", START + 5000), { decision: "approved", reviewer: "conn:1" });
      assert.equal(await again.approvals.latest("f3", START + 5000), undefined);
      const grants = await again.approvals.grants(START + 5000);
      assert.deepStrictEqual(
        grants.map((g) => g.fingerprint),
        ["f1"],
      );
      await assertRejectsWithCode(
        Promise.resolve().then(() => again.approvals.revoke(grants[0]!.id + 1000, "admin", START)),
        "not_found",
      );
      const revoked = await again.approvals.revoke(grants[0]!.id, "admin", START + 6000);
      assertHolds(revoked, { fingerprint: "f1", revoked_by: "admin", revoked_at: START + 6000 });
      await t.closeAll();
      const third = (await t.open()) as DurableRuntimeStore;
      assert.equal(await third.approvals.latest("f1", START + 7000), undefined);
      assert.deepStrictEqual(await third.approvals.grants(START + 7000), []);
      assert.deepStrictEqual(
        (await third.approvals.list()).map((r) => r.fingerprint),
        ["f1", "f2", "f3"],
      );
      assert.deepStrictEqual(
        third.events.query({ kinds: ["approval_recorded", "approval_revoked"] }).map((e) => e.kind),
        ["approval_recorded", "approval_recorded", "approval_recorded", "approval_revoked"],
      );
    },
  },
  {
    name: "durable: keeps per-agent postures across a reopen; a per-tier entry refines the all-tier one",
    durable: ["postures"],
    async run(t) {
      const store = (await t.open()) as DurableRuntimeStore;
      await store.postures.set("bot", "require_approval", null, START);
      await store.postures.set("bot", "always_allow", "read_only", START);
      await store.postures.set("rogue", "deny", null, START);
      await t.closeAll();
      const again = (await t.open()) as DurableRuntimeStore;
      assert.equal(await again.postures.resolve("bot", "read_only"), "always_allow");
      assert.equal(await again.postures.resolve("bot", "full_access"), "require_approval");
      assert.equal(await again.postures.resolve("rogue", "sandbox_edit"), "deny");
      assert.equal(await again.postures.resolve("stranger", "read_only"), undefined);
      assert.equal(await again.postures.clear("bot", null), 2);
      assert.equal(await again.postures.resolve("bot", "read_only"), undefined);
      assert.deepStrictEqual(
        (await again.postures.list()).map((p) => p.agent_id),
        ["rogue"],
      );
    },
  },
];

/** Why `check` does not apply to this harness and store, or undefined when it does. */
function skipReason(check: StoreCheck, harness: StoreHarness, store: RuntimeStore): string | undefined {
  if (check.durable === undefined) return undefined;
  if (!harness.durable) return "the store is not durable (harness.durable is false): reopen, chain, interruption, ledger and posture persistence do not apply";
  const missing = check.durable.filter((part) => (store as unknown as Record<string, unknown>)[part] === undefined);
  return missing.length > 0 ? `the store offers no ${missing.join(", ")}` : undefined;
}

/** Runs one check on a fresh harness: passed, failed (with the error) or skipped (with the reason). Never throws. */
export async function runStoreCheck(check: StoreCheck, makeHarness: () => MaybePromise<StoreHarness>): Promise<StoreCheckResult> {
  const started = performance.now();
  const done = (status: StoreCheckStatus, extra: { reason?: string; error?: string } = {}): StoreCheckResult => ({
    name: check.name,
    status,
    ...extra,
    duration_ms: Math.round(performance.now() - started),
  });
  const opened: RuntimeStore[] = [];
  let harness: StoreHarness | undefined;
  const clock = manualClock(START);
  const closeAll = async (): Promise<void> => {
    for (const store of opened.splice(0)) await store.close?.();
  };
  try {
    harness = await makeHarness();
    const h = harness;
    const open = async (): Promise<RuntimeStore> => {
      const store = await h.open(clock);
      opened.push(store);
      return store;
    };
    const probe = await open();
    const reason = skipReason(check, h, probe);
    await closeAll();
    if (reason !== undefined) return done("skipped", { reason });
    const runtime = async (): Promise<{ rt: Runtime; store: RuntimeStore }> => {
      const store = await open();
      const rt = new Runtime({ store, clock });
      rt.registerTool("ok", () => "done");
      rt.registerTool("boom", () => {
        throw new Error("boom");
      });
      return { rt, store };
    };
    await check.run({ clock, open, closeAll, runtime });
    return done("passed");
  } catch (err) {
    return done("failed", { error: err instanceof Error ? err.message : String(err) });
  } finally {
    await closeAll().catch(() => {});
    await harness?.dispose();
  }
}

/** Runs every check (or those whose name contains one of `only`) against fresh harnesses, one at a time. */
export async function runStoreConformance(
  store: string,
  makeHarness: () => MaybePromise<StoreHarness>,
  options: { only?: readonly string[] } = {},
): Promise<StoreConformanceReport> {
  const only = options.only ?? [];
  const results: StoreCheckResult[] = [];
  for (const check of STORE_CHECKS) {
    if (only.length > 0 && !only.some((o) => check.name.includes(o))) continue;
    results.push(await runStoreCheck(check, makeHarness));
  }
  const count = (s: StoreCheckStatus): number => results.filter((r) => r.status === s).length;
  return { store, passed: count("passed"), failed: count("failed"), skipped: count("skipped"), results };
}
