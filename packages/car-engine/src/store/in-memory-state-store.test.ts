import { manualClock } from "@car/ir";
import { describe, expect, it } from "vitest";
import { InMemoryStateStore } from "./in-memory-state-store.ts";
import { WorkingState } from "./working-state.ts";
import { inMemoryStore } from "./runtime-store.ts";

describe("InMemoryStateStore", () => {
  it("versions every write, keeps the version across a delete, and records who changed what", () => {
    const s = new InMemoryStateStore({ clock: manualClock(0) });
    expect(s.version("k")).toBe(0);
    s.set("k", 1, { proposal_id: "p1", action_id: "a1" });
    s.set("k", 2);
    expect(s.version("k")).toBe(2);
    expect(s.delete("k")).toMatchObject({ mutation: { op: "delete" }, previous_version: 2, version: 3 });
    expect(s.exists("k")).toBe(false);
    expect(s.delete("k")).toBeNull();
    s.set("k", 3);
    expect(s.version("k")).toBe(4);
    expect(s.transitions({ proposal_id: "p1" })).toEqual([
      {
        key: "k",
        mutation: { op: "set", value: 1 },
        previous_version: 0,
        version: 1,
        proposal_id: "p1",
        action_id: "a1",
        timestamp: "1970-01-01T00:00:00.000Z",
      },
    ]);
  });

  it("copies values in and out, and treats __proto__ as an ordinary key", () => {
    const s = new InMemoryStateStore();
    const v = { a: [1] };
    s.set("__proto__", v);
    v.a.push(2);
    (s.get("__proto__") as { a: number[] }).a.push(3);
    expect(s.get("__proto__")).toEqual({ a: [1] });
    expect(Object.keys(s.snapshot())).toEqual(["__proto__"]);
    expect(s.keys()).toEqual(["__proto__"]);
  });

  it("restore makes the state equal to a snapshot with versioned writes", () => {
    const s = new InMemoryStateStore({ initial: { a: 1, b: 2 } });
    const snap = s.snapshot();
    s.set("a", 10);
    s.set("c", 3);
    const changes = s.restore(snap);
    expect(s.snapshot()).toEqual({ a: 1, b: 2 });
    expect(changes.map((c) => [c.key, c.mutation.op])).toEqual([
      ["c", "delete"],
      ["a", "set"],
    ]);
    expect(s.entries()).toEqual([
      { key: "a", value: 1, version: 3 },
      { key: "b", value: 2, version: 1 },
    ]);
  });
});

describe("WorkingState", () => {
  it("keeps writes private until committed and records reads with versions", () => {
    const store = inMemoryStore({ initialState: { x: 1 } });
    const w = new WorkingState(store.state);
    w.noteRead("x", "a1");
    w.set("x", 2, "a1");
    w.noteRead("x", "a2"); // own write: not a shared read
    w.delete("x", "a2");
    expect(w.exists("x")).toBe(false);
    expect(store.state.get("x")).toBe(1);
    expect(w.reads).toEqual([{ key: "x", version: 1, action_id: "a1" }]);
    const transitions = store.commitProposal({
      proposal_id: "p",
      run_id: "run-p",
      outcome: "committed",
      mutations: w.mutations,
      reads: w.reads,
      assumptions: [],
      events: [],
    });
    expect(transitions).toHaveLength(2);
    expect(store.state.exists("x")).toBe(false);
    expect(store.state.version("x")).toBe(3);
  });

  it("a rolled-back commit applies nothing", () => {
    const store = inMemoryStore();
    const w = new WorkingState(store.state);
    w.set("y", 1, "a1");
    expect(store.commitProposal({ proposal_id: "p", run_id: "run-p", outcome: "rolled_back", mutations: [], reads: [], assumptions: [], events: [] })).toEqual(
      [],
    );
    expect(store.state.exists("y")).toBe(false);
  });
});
