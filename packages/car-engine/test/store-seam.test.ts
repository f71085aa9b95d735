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
