/** The core checks every store passes, durable or not: versioned state, copies in and out, a proposal's commit with its events, queries, rollback, live subscribers, and state equal to the replay of its events. */
import assert from "node:assert/strict";
import type { JsonValue } from "@car/ir";
import { replayStateChanges } from "@car/engine/durable";
import { assertHolds, write } from "./assertions.ts";
import type { StoreCheck } from "./check.ts";

export const CORE_CHECKS: readonly StoreCheck[] = [
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
];
