/**
 * Two stores on one database file (a server and a `car run`, say): events
 * form one chain, each sees the other's committed state, and a proposal
 * whose read or written key the other process moved meanwhile is refused
 * and rolled back instead of overwriting it.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { Runtime } from "@car/engine";
import { sqlite } from "./sqlite-store.ts";
import type { SqliteStore } from "./sqlite-store.ts";
import { tempDatabase } from "@car/test-kit/temp-database";
import type { TempDir } from "@car/test-kit/temp-database";

let temp: TempDir;
const stores: SqliteStore[] = [];

beforeEach(() => {
  temp = tempDatabase();
});
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  temp.remove();
});

function runtime(): { rt: Runtime; store: SqliteStore } {
  const store = sqlite(temp.db);
  stores.push(store);
  return { rt: new Runtime({ store }), store };
}

it("interleaved writers share one chain and see each other's commits", async () => {
  const a = runtime();
  const b = runtime();
  for (let i = 0; i < 3; i++) {
    await a.rt.executeProposal({ id: `a${i}`, actions: [{ id: "w", type: "state_write", parameters: { key: "a", value: i } }] });
    await b.rt.executeProposal({ id: `b${i}`, actions: [{ id: "w", type: "state_write", parameters: { key: "b", value: i } }] });
  }
  expect(a.store.verifyChain()).toMatchObject({ ok: true, verified: a.store.events.count() });
  const seqs = a.store.events.query().map((e) => e.seq);
  expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  await a.rt.executeProposal({ id: "a-last", actions: [{ id: "r", type: "state_read", parameters: { key: "b" } }] });
  expect(a.rt.state.get("b")).toBe(2);
});

it("refuses a commit whose read key another process changed mid-proposal", async () => {
  const a = runtime();
  const b = runtime();
  await a.rt.executeProposal({ id: "init", actions: [{ id: "w", type: "state_write", parameters: { key: "balance", value: 100 } }] });
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  a.rt.registerTool("slow", async () => {
    started();
    await gate;
    return null;
  });
  const pending = a.rt.executeProposalWithReport({
    id: "spend",
    actions: [{ id: "check", type: "tool_call", tool: "slow", parameters: {}, read_set: ["balance"], expected_effects: { balance: 50 } }],
  });
  await running;
  await b.rt.executeProposal({ id: "deposit", actions: [{ id: "w", type: "state_write", parameters: { key: "balance", value: 200 } }] });
  release();
  const { result, report } = await pending;
  expect(result.results[0]).toMatchObject({ rolled_back: true });
  // The run's report says so as data: what a transport answers with, without reading the log again.
  expect(report).toMatchObject({
    outcome: "refused",
    code: "stale_read",
    refusal: {
      code: "stale_read",
      keys: ["balance"],
      message: "commit refused: state the proposal read changed before it committed: balance — every change was rolled back (stale_read)",
    },
  });
  expect(a.rt.state.get("balance")).toBe(200);
  // The durable log never records the change that did not land: one refusal naming the key, then the rollback.
  const stored = [...a.store.storedEvents()].filter((e) => e.proposal_id === "spend");
  expect(stored.filter((e) => e.kind === "state_changed")).toEqual([]);
  expect(stored.filter((e) => e.kind === "proposal_completed").map((e) => e.data["outcome"])).toEqual(["rolled_back"]);
  expect(stored.find((e) => e.kind === "commit_refused")!.data).toEqual({
    code: "stale_read",
    keys: ["balance"],
    reason: "commit refused: state the proposal read changed before it committed: balance",
    run_id: stored[0]!.data["run_id"],
  });
  expect(a.store.verifyChain()).toMatchObject({ ok: true, state: { compared: true } });
});

it("a direct write catches up with another process's writes before versioning the key", () => {
  const a = runtime();
  const b = runtime();
  a.rt.state.set("k", 1);
  b.rt.state.set("k", 2);
  expect(a.rt.state.set("k", 3).version).toBe(3);
  expect(b.rt.state.set("k", 4)).toMatchObject({ previous_version: 3, version: 4 });
  expect(a.store.state.transitions({ key: "k" }).map((t) => t.version)).toEqual([1, 2, 3, 4]);
});
