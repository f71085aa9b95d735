import { CarError } from "@car/ir";
import { expect, it } from "vitest";
import { Runtime, inMemoryStore } from "../src/index.ts";
import type { ProposalCommit, RuntimeStore } from "../src/index.ts";
import { tc } from "./helpers.ts";

it("a commit the store refuses with stale_read rolls the proposal back and commits that outcome with its events", async () => {
  const base = inMemoryStore();
  const commits: ProposalCommit[] = [];
  const store: RuntimeStore = {
    ...base,
    commitProposal(commit) {
      commits.push(commit);
      if (commit.outcome === "committed") throw new CarError("stale_read", "state read by the proposal changed before commit: k", { keys: ["k"] });
      return base.commitProposal(commit);
    },
  };
  const rt = new Runtime({ store });
  rt.registerTool("t", () => 1);
  const r = await rt.executeProposal({ actions: [tc("a", "t", { expected_effects: { out: 1 }, read_set: ["k"] })] });
  expect(r.results[0]).toMatchObject({ status: "succeeded", rolled_back: true, state_changes: {} });
  expect(commits.map((c) => c.outcome)).toEqual(["committed", "rolled_back"]);
  expect(commits[0]!.reads).toEqual([{ key: "k", version: 0, action_id: "a" }]);
  expect(commits[0]!.mutations.map((m) => m.key)).toEqual(["out"]);
  expect(commits[1]!.mutations).toEqual([]);
  expect(commits[1]!.events.at(-1)!.data).toMatchObject({ outcome: "rolled_back", reason: "state read by the proposal changed before commit: k" });
  // The log never records a change that did not land: no state_changed, no "committed"; one refusal naming the keys.
  const kinds = commits[1]!.events.map((e) => e.kind);
  expect(kinds).not.toContain("state_changed");
  expect(commits[1]!.events.filter((e) => e.kind === "proposal_completed").map((e) => e.data["outcome"])).toEqual(["rolled_back"]);
  expect(commits[1]!.events.find((e) => e.kind === "commit_refused")!.data).toMatchObject({ code: "stale_read", keys: ["k"] });
  expect(rt.events.query({ kinds: ["state_changed"] })).toEqual([]);
  expect(rt.state.exists("out")).toBe(false);
});

/** An in-memory store whose log answers `persist` with `answer` (a durable log's durability point before each tool call). */
function persistingStore(answer: () => void | Promise<void>): { store: RuntimeStore; persists: () => number } {
  const base = inMemoryStore();
  let n = 0;
  const events = Object.assign(base.events, {
    persist: () => {
      n++;
      return answer();
    },
  });
  return { store: { ...base, events }, persists: () => n };
}

it("a tool is called only after its dispatch intent is durable: it waits for the log's persist", async () => {
  let release!: () => void;
  const { store, persists } = persistingStore(() => new Promise<void>((resolve) => (release = resolve)));
  const rt = new Runtime({ store });
  const calls: string[] = [];
  rt.registerTool("t", (_params, ctx) => {
    calls.push(ctx.action_id);
    return 1;
  });
  const running = rt.executeProposal({ actions: [tc("a", "t")] });
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(persists()).toBe(1);
  const run_id = rt.events.query({ kinds: ["proposal_received"] })[0]!.data["run_id"];
  expect(rt.events.query({ kinds: ["dispatch_intent"] }).map((e) => [e.action_id, e.data])).toEqual([["a", { attempt: 1, tool: "t", run_id }]]);
  expect(calls).toEqual([]);
  release();
  expect((await running).results[0]!.status).toBe("succeeded");
  expect(calls).toEqual(["a"]);
});

it("an intent that cannot be made durable fails the action for good: the tool is never called, not even on retry", async () => {
  const { store, persists } = persistingStore(() => Promise.reject(new CarError("storage_error", "disk full")));
  const rt = new Runtime({ store });
  let called = 0;
  rt.registerTool("t", () => ++called);
  const r = await rt.executeProposal({ actions: [tc("a", "t", { failure_behavior: "retry", max_retries: 3 })] });
  expect(called).toBe(0);
  expect(persists()).toBe(1);
  expect(r.results[0]).toMatchObject({ status: "failed", error: "the dispatch intent was not written, so the tool was not called: disk full" });
});
