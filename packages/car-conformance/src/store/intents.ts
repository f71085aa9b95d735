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
      assertHolds(interrupted, { length: 1, 0: { proposal_id: "p", dispatched: ["a", "b", "c"] } });
      const intents = again.events.query({ proposal_id: "p", kinds: ["dispatch_intent"] });
      assert.deepStrictEqual(
        intents.map((e) => [e.action_id, e.data]),
        [
          ["a", { attempt: 1, tool: "look" }],
          ["b", { attempt: 1, tool: "look" }],
          ["c", { attempt: 1, tool: "hang" }],
        ],
      );
      assertHolds(again.events.query({ proposal_id: "p", kinds: ["proposal_interrupted"] }), { length: 1, 0: { data: { dispatched: ["a", "b", "c"] } } });
    },
  },
];
