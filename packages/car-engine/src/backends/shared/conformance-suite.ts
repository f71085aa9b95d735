/**
 * One behavioural test suite for every `RuntimeStore` backend (in-memory,
 * SQLite, PostgreSQL): call `describeRuntimeStoreConformance(name, harness)`
 * from a backend's test file. The common part runs through a real `Runtime`;
 * a durable harness also gets the reopen, hash-chain, interruption, ledger
 * and posture tests. Test-only: it imports vitest and is not exported from
 * the package.
 */
import { manualClock } from "@car/ir";
import type { Clock, JsonValue } from "@car/ir";
import type { ApprovalRecord } from "@car/policy";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CarEvent } from "../../events/event.ts";
import { Runtime } from "../../runtime.ts";
import type { RuntimeStore } from "../../store/runtime-store.ts";
import type { ChainReport } from "./chain-verify.ts";
import type { DurableRuntimeStore } from "./durable-store.ts";
import { GENESIS_HASH } from "./event-hash.ts";
import { replayStateChanges } from "./state-replay.ts";

type MaybePromise<T> = T | Promise<T>;

export interface StoreHarness {
  /** True when a later `open` sees what an earlier one wrote (and the store is a `DurableRuntimeStore`). */
  durable: boolean;
  /** A store over this harness's data; a durable backend opens the same data again on every call. */
  open(clock: Clock): MaybePromise<RuntimeStore>;
  /** Deletes the data (temporary files, schemas). Stores are closed by the suite first. */
  dispose(): MaybePromise<void>;
}

const START = Date.parse("2026-01-01T00:00:00.000Z");

const write = (id: string, key: string, value: JsonValue, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ id, type: "state_write", parameters: { key, value }, ...extra });

export function describeRuntimeStoreConformance(name: string, makeHarness: () => MaybePromise<StoreHarness>): void {
  describe(`RuntimeStore conformance: ${name}`, () => {
    let harness: StoreHarness;
    let clock: ReturnType<typeof manualClock>;
    const opened: RuntimeStore[] = [];

    const open = async (): Promise<RuntimeStore> => {
      const store = await harness.open(clock);
      opened.push(store);
      return store;
    };
    const closeAll = async (): Promise<void> => {
      for (const store of opened.splice(0)) await store.close?.();
    };
    const runtime = async (): Promise<{ rt: Runtime; store: RuntimeStore }> => {
      const store = await open();
      const rt = new Runtime({ store, clock });
      rt.registerTool("ok", () => "done");
      rt.registerTool("boom", () => {
        throw new Error("boom");
      });
      return { rt, store };
    };

    beforeEach(async () => {
      harness = await makeHarness();
      clock = manualClock(START);
    });
    afterEach(async () => {
      await closeAll();
      await harness.dispose();
    });

    it("keeps versioned state: a delete keeps the version, keys stay in first-write order, restore writes the difference", async () => {
      const { state } = await open();
      expect(state.set("a", { n: 1 }).version).toBe(1);
      state.set("b", [1, 2]);
      state.set("a", { n: 2 });
      expect(state.version("a")).toBe(2);
      expect(state.delete("a")).toMatchObject({ key: "a", previous_version: 2, version: 3, mutation: { op: "delete" } });
      expect(state.delete("a")).toBeNull();
      expect(state.exists("a")).toBe(false);
      expect(state.version("a")).toBe(3);
      state.set("a", 7);
      expect(state.version("a")).toBe(4);
      expect(state.keys()).toEqual(["b", "a"]);
      const changes = state.restore({ a: 7, c: "new" });
      expect(changes.map((t) => [t.key, t.mutation.op])).toEqual([
        ["b", "delete"],
        ["c", "set"],
      ]);
      expect(state.snapshot()).toEqual({ a: 7, c: "new" });
      expect(state.entries()).toEqual([
        { key: "a", value: 7, version: 4 },
        { key: "c", value: "new", version: 1 },
      ]);
      expect(state.transitions({ key: "a" }).map((t) => t.version)).toEqual([1, 2, 3, 4]);
    });

    it("copies values in and out, and treats __proto__ and constructor as ordinary keys", async () => {
      const { state } = await open();
      const value = JSON.parse('{"__proto__": {"x": 1}, "constructor": 2}') as JsonValue;
      state.set("__proto__", value);
      const read = state.get("__proto__") as Record<string, JsonValue>;
      expect(Object.keys(read)).toEqual(["__proto__", "constructor"]);
      (read["constructor"] as unknown) = 3;
      expect((state.get("__proto__") as Record<string, JsonValue>)["constructor"]).toBe(2);
      expect(Object.keys(state.snapshot())).toEqual(["__proto__"]);
      expect(({} as Record<string, unknown>)["x"]).toBeUndefined();
    });

    it("commits a proposal's writes with attribution, and records its events in order", async () => {
      const { rt } = await runtime();
      const result = await rt.executeProposal({ id: "p1", actions: [write("w", "k", 1), { id: "t", type: "tool_call", tool: "ok", parameters: {}, expected_effects: { done: true } }] });
      expect(result.results.map((r) => r.status)).toEqual(["succeeded", "succeeded"]);
      expect(rt.state.snapshot()).toEqual({ k: 1, done: true });
      expect(rt.state.transitions({ proposal_id: "p1" }).map((t) => [t.key, t.action_id])).toEqual([
        ["k", "w"],
        ["done", "t"],
      ]);
      const events = rt.events.query({ proposal_id: "p1" });
      expect(events[0]!.kind).toBe("proposal_received");
      expect(events.at(-1)!.kind).toBe("proposal_completed");
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => events[0]!.seq + i));
      expect(rt.events.query({ proposal_id: "p1", kinds: ["state_changed"] }).map((e) => e.data["key"])).toEqual(["k", "done"]);
    });

    it("answers queries by kind, proposal, action, time, data, order, limit and after_seq, and counts the same way", async () => {
      const { rt } = await runtime();
      await rt.executeProposal({ id: "p1", actions: [{ id: "a", type: "tool_call", tool: "ok", parameters: {} }] });
      clock.advance(60_000);
      const middle = new Date(clock.now()).toISOString();
      await rt.executeProposal({ id: "p2", actions: [{ id: "a", type: "tool_call", tool: "ok", parameters: {} }] });
      expect(rt.events.query({ kinds: ["proposal_received"] }).map((e) => e.proposal_id)).toEqual(["p1", "p2"]);
      expect(rt.events.query({ proposal_id: "p2", action_id: "a", kinds: ["action_succeeded"] })).toHaveLength(1);
      expect(rt.events.query({ since: middle }).every((e) => e.proposal_id === "p2")).toBe(true);
      expect(rt.events.query({ until: middle }).every((e) => e.proposal_id === "p1")).toBe(true);
      expect(rt.events.query({ data_matches: { tool: "ok" }, order: "desc", limit: 1 })[0]).toMatchObject({ proposal_id: "p2", kind: "action_succeeded" });
      const all = rt.events.query();
      const cut = all[2]!.seq;
      expect(rt.events.query({ after_seq: cut }).map((e) => e.seq)).toEqual(all.filter((e) => e.seq > cut).map((e) => e.seq));
      expect(rt.events.count()).toBe(all.length);
      expect(rt.events.count({ kinds: ["action_succeeded"] })).toBe(2);
      expect(rt.events.count({ data_matches: { tool: "ok" }, limit: 1 })).toBe(1);
      expect(rt.events.query({ order: "desc" }).map((e) => e.seq)).toEqual(all.map((e) => e.seq).reverse());
    });

    it("leaves state untouched by an aborted proposal and records the rollback", async () => {
      const { rt } = await runtime();
      rt.state.set("k", "before");
      const result = await rt.executeProposal({ id: "p", actions: [write("w", "k", "during"), { id: "b", type: "tool_call", tool: "boom", parameters: {}, dependencies: ["w"] }] });
      expect(result.results[0]).toMatchObject({ rolled_back: true });
      expect(rt.state.snapshot()).toEqual({ k: "before" });
      expect(rt.state.version("k")).toBe(1);
      expect(rt.events.query({ proposal_id: "p", kinds: ["proposal_completed"] })[0]!.data["outcome"]).toBe("rolled_back");
      expect(rt.events.count({ proposal_id: "p", kinds: ["state_changed"] })).toBe(0);
    });

    it("feeds subscribers live", async () => {
      const { rt } = await runtime();
      const feed = rt.events.subscribe({ filter: { kinds: ["proposal_completed"] } });
      const next = feed.next();
      await rt.executeProposal({ id: "p", actions: [write("w", "k", 1)] });
      expect((await next).value).toMatchObject({ kind: "proposal_completed", proposal_id: "p" });
      await feed.return!();
    });

    it("keeps the state equal to the replay of its committed state_changed events", async () => {
      const { rt } = await runtime();
      await rt.executeProposal({ id: "p1", actions: [write("a", "x", 1), write("b", "y", { z: [1] })] });
      await rt.executeProposal({ id: "p2", actions: [write("a", "x", 2), { id: "b", type: "tool_call", tool: "boom", parameters: {}, dependencies: ["a"] }] });
      await rt.executeProposal({ id: "p3", actions: [write("a", "y", null)] });
      expect(replayStateChanges(rt.events.query())).toEqual(rt.state.snapshot());
    });

    describe("durable", () => {
      const durableOnly = (title: string, fn: () => Promise<void>): void => {
        it(title, async () => {
          if (!harness.durable) return;
          await fn();
        });
      };

      durableOnly("survives a reopen: state, versions, events; numbering continues", async () => {
        const { rt } = await runtime();
        await rt.executeProposal({ id: "p1", actions: [write("a", "k", 1), write("b", "k", 2)] });
        const before = rt.events.query();
        await closeAll();
        const { rt: again } = await runtime();
        expect(again.state.snapshot()).toEqual({ k: 2 });
        expect(again.state.version("k")).toBe(2);
        expect(again.events.query()).toEqual(before);
        await again.executeProposal({ id: "p2", actions: [write("a", "k", 3)] });
        expect(again.events.query({ proposal_id: "p2" })[0]!.seq).toBe(before.at(-1)!.seq + 1);
      });

      durableOnly("chains every event to the one before it and verifies", async () => {
        const { rt, store } = await runtime();
        await rt.executeProposal({ id: "p1", actions: [write("a", "k", 1)] });
        await rt.executeProposal({ id: "p2", actions: [write("a", "k", 2)] });
        const events: CarEvent[] = rt.events.query();
        expect(events[0]!.prev_hash).toBe(GENESIS_HASH);
        for (let i = 1; i < events.length; i++) expect(events[i]!.prev_hash).toBe(events[i - 1]!.hash);
        const report: ChainReport = await (store as DurableRuntimeStore).verifyChain();
        expect(report).toMatchObject({ ok: true, verified: events.length, head: { seq: events.at(-1)!.seq, hash: events.at(-1)!.hash } });
      });

      durableOnly("marks a proposal left executing by a stopped process as interrupted, state untouched", async () => {
        const store = await open();
        store.state.set("k", "before");
        await store.beginProposal!({ proposal_id: "lost", timestamp: new Date(clock.now()).toISOString() });
        await closeAll();
        const again = await open();
        const rt2 = new Runtime({ store: again, clock });
        expect(await rt2.recover()).toEqual([{ proposal_id: "lost", timestamp: new Date(START).toISOString() }]);
        expect(await rt2.recover()).toEqual([]);
        expect(again.state.snapshot()).toEqual({ k: "before" });
        expect(again.events.query({ proposal_id: "lost" }).map((e) => e.kind)).toEqual(["proposal_interrupted"]);
      });

      durableOnly("keeps approvals and standing grants across a reopen; a revoked grant no longer answers", async () => {
        const store = (await open()) as DurableRuntimeStore;
        const base: ApprovalRecord = { fingerprint: "f1", decision: "approved", required_tier: "full_access", reviewer: "conn:1", decided_at: START, expires_at: null, action_id: "a" };
        await store.approvals.record(base);
        await store.approvals.record({ ...base, fingerprint: "f2", decision: "rejected" });
        await store.approvals.record({ ...base, fingerprint: "f3", expires_at: START + 1000 });
        await closeAll();
        const again = (await open()) as DurableRuntimeStore;
        expect(await again.approvals.latest("f1", START + 5000)).toMatchObject({ decision: "approved", reviewer: "conn:1" });
        expect(await again.approvals.latest("f3", START + 5000)).toBeUndefined();
        const grants = await again.approvals.grants(START + 5000);
        expect(grants.map((g) => g.fingerprint)).toEqual(["f1"]);
        await expect(again.approvals.revoke(grants[0]!.id + 1000, "admin", START)).rejects.toMatchObject({ code: "not_found" });
        const revoked = await again.approvals.revoke(grants[0]!.id, "admin", START + 6000);
        expect(revoked).toMatchObject({ fingerprint: "f1", revoked_by: "admin", revoked_at: START + 6000 });
        await closeAll();
        const third = (await open()) as DurableRuntimeStore;
        expect(await third.approvals.latest("f1", START + 7000)).toBeUndefined();
        expect(await third.approvals.grants(START + 7000)).toEqual([]);
        expect((await third.approvals.list()).map((r) => r.fingerprint)).toEqual(["f1", "f2", "f3"]);
        expect(third.events.query({ kinds: ["approval_recorded", "approval_revoked"] }).map((e) => e.kind)).toEqual(["approval_recorded", "approval_recorded", "approval_recorded", "approval_revoked"]);
      });

      durableOnly("keeps per-agent postures across a reopen; a per-tier entry refines the all-tier one", async () => {
        const store = (await open()) as DurableRuntimeStore;
        await store.postures.set("bot", "require_approval", null, START);
        await store.postures.set("bot", "always_allow", "read_only", START);
        await store.postures.set("rogue", "deny", null, START);
        await closeAll();
        const again = (await open()) as DurableRuntimeStore;
        expect(await again.postures.resolve("bot", "read_only")).toBe("always_allow");
        expect(await again.postures.resolve("bot", "full_access")).toBe("require_approval");
        expect(await again.postures.resolve("rogue", "sandbox_edit")).toBe("deny");
        expect(await again.postures.resolve("stranger", "read_only")).toBeUndefined();
        expect(await again.postures.clear("bot", null)).toBe(2);
        expect(await again.postures.resolve("bot", "read_only")).toBeUndefined();
        expect((await again.postures.list()).map((p) => p.agent_id)).toEqual(["rogue"]);
      });
    });
  });
}
