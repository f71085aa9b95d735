/** Dispatch intents: each is on record before its tool runs (another opening of the data sees it), and recovery lists what an interrupted proposal dispatched. */
import assert from "node:assert/strict";
import type { ActionInput } from "@car/ir";
import { Runtime } from "@car/engine";
import { assertHolds } from "./assertions.ts";
import type { StoreCheck } from "./check.ts";

export const INTENT_CHECKS: readonly StoreCheck[] = [
  {
    name: "durable: writes each dispatch intent before its tool runs; recovery lists the dispatched actions of an interrupted proposal",
    durable: ["recover"],
    async run(t) {
      const { rt } = await t.runtime();
      // What another opening of the data holds at the moment each tool runs.
      const onRecord: Record<string, (string | undefined)[]> = {};
      const look = async (action: string): Promise<void> => {
        const other = await t.open();
        onRecord[action] = other.events.query({ proposal_id: "p", kinds: ["dispatch_intent"] }).map((e) => e.action_id);
      };
      rt.registerTool("look", async (_params, ctx) => {
        await look(ctx.action_id);
        return "seen";
      });
      let hung!: () => void;
      const hanging = new Promise<void>((resolve) => (hung = resolve));
      rt.registerTool("hang", async (_params, ctx) => {
        await look(ctx.action_id);
        hung();
        return new Promise(() => {});
      });
      const tool = (id: string, name: string, dependencies: string[] = []): ActionInput => ({
        id,
        type: "tool_call",
        tool: name,
        parameters: {},
        dependencies,
      });
      void rt.executeProposal({ id: "p", actions: [tool("a", "look"), tool("b", "look"), tool("c", "hang", ["a", "b"]), tool("d", "look", ["c"])] });
      await hanging;
      assert.deepStrictEqual(Object.keys(onRecord).sort(), ["a", "b", "c"]);
      for (const action of ["a", "b"]) assert.ok(onRecord[action]!.includes(action), `${action}'s intent is on record when it runs: ${onRecord[action]}`);
      assert.deepStrictEqual(onRecord["c"], ["a", "b", "c"], "every earlier intent and c's are on record when c runs");
      // The process "stops" with c in flight: the next one finds p executing, with a, b and c dispatched and d never.
      await t.closeAll();
      const again = await t.open();
      const interrupted = await new Runtime({ store: again, clock: t.clock }).recover();
      const run_id = again.events.query({ proposal_id: "p", kinds: ["proposal_received"] })[0]?.data["run_id"];
      assert.ok(typeof run_id === "string", "the run's proposal_received names its run");
      assertHolds(interrupted, { length: 1, 0: { proposal_id: "p", run_id, dispatched: ["a", "b", "c"] } });
      const intents = again.events.query({ proposal_id: "p", kinds: ["dispatch_intent"] });
      assert.deepStrictEqual(
        intents.map((e) => [e.action_id, e.data]),
        [
          ["a", { attempt: 1, tool: "look", run_id }],
          ["b", { attempt: 1, tool: "look", run_id }],
          ["c", { attempt: 1, tool: "hang", run_id }],
        ],
      );
      assertHolds(again.events.query({ proposal_id: "p", kinds: ["proposal_interrupted"] }), {
        length: 1,
        0: { data: { dispatched: ["a", "b", "c"], run_id } },
      });
    },
  },
  {
    // DECISIONS §20: a proposal id is the proposer's label and can be run again; the clock can stand still or go back.
    // A lookup of the proposal id's intents "since the run began" would hand the earlier run's dispatched actions to the later one.
    name: "durable: recovery lists the dispatched actions of the interrupted run only, not of an earlier run of the same proposal id (same millisecond, clock set back)",
    durable: ["recover"],
    async run(t) {
      const { rt } = await t.runtime();
      let hanging = 0;
      rt.registerTool("hang", () => {
        hanging += 1;
        return new Promise(() => {});
      });
      const call = (id: string, tool: string): ActionInput => ({ id, type: "tool_call", tool, parameters: {} });
      // "same-ms": both runs start in one millisecond. "skewed": the second starts a minute before the first, by the clock.
      await rt.executeProposal({ id: "same-ms", actions: [call("earlier", "ok")] });
      t.clock.advance(60_000);
      await rt.executeProposal({ id: "skewed", actions: [call("earlier", "ok")] });
      t.clock.advance(-60_000);
      void rt.executeProposal({ id: "same-ms", actions: [call("later", "hang")] });
      void rt.executeProposal({ id: "skewed", actions: [call("later", "hang")] });
      for (let i = 0; i < 1000 && hanging < 2; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      assert.equal(hanging, 2, "both second runs reached their tool");
      await t.closeAll();
      const again = await t.open();
      const interrupted = await new Runtime({ store: again, clock: t.clock }).recover();
      const runsOf = (proposal_id: string) => again.events.query({ proposal_id, kinds: ["proposal_received"] }).map((e) => e.data["run_id"]);
      const expected = ["same-ms", "skewed"].map((proposal_id) => {
        const [first, second] = runsOf(proposal_id);
        assert.ok(typeof first === "string" && typeof second === "string" && first !== second, `${proposal_id}: two runs, two run ids`);
        // One run's events, read by its run id: the second run's intent and proposal_interrupted, nothing of the first.
        const ofRun = again.events.query({ data_matches: { run_id: second } });
        assert.deepStrictEqual(
          ofRun.filter((e) => e.kind === "dispatch_intent" || e.kind === "proposal_interrupted").map((e) => [e.proposal_id, e.kind, e.action_id]),
          [
            [proposal_id, "dispatch_intent", "later"],
            [proposal_id, "proposal_interrupted", undefined],
          ],
        );
        assert.ok(!ofRun.some((e) => e.action_id === "earlier"), `${proposal_id}: the first run's events are not the second's`);
        return { proposal_id, run_id: second, timestamp: new Date(t.clock.now()).toISOString(), dispatched: ["later"] };
      });
      assert.deepStrictEqual(
        [...interrupted].sort((a, b) => a.proposal_id.localeCompare(b.proposal_id)),
        expected,
      );
      for (const { proposal_id, run_id } of expected) {
        assertHolds(again.events.query({ proposal_id, kinds: ["proposal_interrupted"] }), { length: 1, 0: { data: { dispatched: ["later"], run_id } } });
      }
    },
  },
];
