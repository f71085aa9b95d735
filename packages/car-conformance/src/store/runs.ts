/**
 * Agent run traces (`runs.*`): a trace survives a reopen in order; the store
 * owns the turn index; a retried start with the same id returns the run it
 * opened; a terminal run or a batch past the ceiling appends nothing;
 * concurrent batches never share an index; and `runs.list` pages in one
 * total order every store shares.
 */
import assert from "node:assert/strict";
import { type AuditedRuntimeStore, InMemoryRunStore, RUN_TURN_CEILING, type RunPageKey, type RunStore } from "@car/engine";
import type { JsonObject } from "@car/ir";
import { START, type StoreCheck } from "./check.ts";

const AT = new Date(START).toISOString();

function started(run_id: string, agent_id: string, intent: string): JsonObject {
  return { record: "started", run_id, agent_id, intent, timestamp: AT };
}

async function open(runs: RunStore, run_id: string, agent_id = "bot", started_at = AT) {
  return runs.start({ run_id, agent_id, intent: `do ${run_id}`, started_at, record: started(run_id, agent_id, `do ${run_id}`) });
}

export const RUN_CHECKS: readonly StoreCheck[] = [
  {
    name: "durable: keeps a run's trace across a reopen, in order, with the turn index the store stamped",
    durable: ["runs"],
    async run(t) {
      const store = (await t.open()) as AuditedRuntimeStore;
      await open(store.runs, "r1");
      const first = await store.runs.appendTurns(
        "r1",
        [
          { record: "turn", tool: "a", index: 99 },
          { record: "turn", tool: "b" },
        ],
        RUN_TURN_CEILING,
      );
      assert.deepStrictEqual(first.ok && [first.base_index, first.count], [0, 2]);
      const second = await store.runs.appendTurns("r1", [{ record: "model_turn", assistant_text: "next" }], RUN_TURN_CEILING);
      assert.deepStrictEqual(second.ok && [second.base_index, second.turn_count], [2, 3]);
      const ended = await store.runs.end("r1", { record: "ended", termination: "outcome" }, "completed", AT);
      assert.equal(ended.ok, true);
      await t.closeAll();
      const again = (await t.open()) as AuditedRuntimeStore;
      const records = await again.runs.records("r1", 0);
      assert.deepStrictEqual(
        records.map((r) => [r.record, r.index ?? null]),
        [
          ["started", null],
          ["turn", 0],
          ["turn", 1],
          ["model_turn", 2],
          ["ended", null],
        ],
      );
      assert.deepStrictEqual(
        (await again.runs.records("r1", 3, 1)).map((r) => r.record),
        ["model_turn"],
      );
      const summary = await again.runs.get("r1");
      assert.equal(summary?.status, "completed");
      assert.equal(summary?.turn_count, 3);
      assert.equal(summary?.ended_at, AT);
      assert.equal(await again.runs.get("nope"), undefined);
      assert.deepStrictEqual(await again.runs.records("nope", 0), []);
    },
  },
  {
    name: "durable: a retried start returns the run it opened; a terminal run and a batch past the ceiling append nothing",
    durable: ["runs"],
    async run(t) {
      const { runs } = (await t.open()) as AuditedRuntimeStore;
      assert.equal((await open(runs, "r1")).created, true);
      await runs.appendTurns("r1", [{ record: "turn" }], RUN_TURN_CEILING);
      const retry = await runs.start({ run_id: "r1", agent_id: "other", intent: "changed", started_at: AT, record: started("r1", "other", "changed") });
      assert.deepStrictEqual([retry.created, retry.summary.agent_id, retry.summary.intent, retry.summary.turn_count], [false, "bot", "do r1", 1]);
      assert.deepStrictEqual(await runs.appendTurns("r1", [{ record: "turn" }, { record: "turn" }], 2), { ok: false, dropped: "run_turn_limit" });
      assert.deepStrictEqual(await runs.appendTurns("ghost", [{ record: "turn" }], RUN_TURN_CEILING), { ok: false, dropped: "run_not_found" });
      assert.equal((await runs.end("r1", { record: "ended", termination: "incomplete" }, "incomplete", AT)).ok, true);
      assert.deepStrictEqual(await runs.end("r1", { record: "ended" }, "completed", AT), { ok: false, refused: "run_terminal" });
      assert.deepStrictEqual(await runs.end("ghost", { record: "ended" }, "completed", AT), { ok: false, refused: "run_not_found" });
      assert.deepStrictEqual(await runs.appendTurns("r1", [{ record: "turn" }], RUN_TURN_CEILING), { ok: false, dropped: "run_terminal" });
      assert.equal((await runs.records("r1", 0)).length, 3);
      assert.equal((await runs.get("r1"))?.status, "incomplete");
    },
  },
  {
    name: "durable: concurrent batches on one run get disjoint, contiguous indices; runs list per agent, newest first",
    durable: ["runs"],
    async run(t) {
      const { runs } = (await t.open()) as AuditedRuntimeStore;
      await open(runs, "old", "bot", new Date(START).toISOString());
      await open(runs, "new", "bot", new Date(START + 1000).toISOString());
      await open(runs, "theirs", "other");
      const batches = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          runs.appendTurns(
            "new",
            [
              { record: "turn", n: i },
              { record: "turn", n: i },
            ],
            15,
          ),
        ),
      );
      const accepted = batches.filter((b) => b.ok);
      assert.equal(accepted.length, 7, "the ceiling of 15 admits 7 batches of 2, refusing the 8th whole");
      const indices = (await runs.records("new", 1)).map((r) => r.index);
      assert.deepStrictEqual(
        indices,
        Array.from({ length: 14 }, (_, i) => i),
      );
      assert.deepStrictEqual(
        (await runs.list("bot")).map((r) => r.run_id),
        ["new", "old"],
      );
      assert.deepStrictEqual(await runs.list("nobody"), []);
    },
  },
  {
    name: "runs page newest first then by run id, each page strictly after the last, unshifted by runs opened meanwhile",
    async run(t) {
      // A store without its own run store is served by the engine's InMemoryRunStore, as `car serve` does.
      const opened = await t.open();
      const runs: RunStore = "runs" in opened && opened.runs !== undefined ? (opened as AuditedRuntimeStore).runs : new InMemoryRunStore();
      const store = { runs };
      const at = (s: number) => new Date(START + s * 1000).toISOString();
      // Two runs share a start time: the run id orders them, the same way in every store.
      for (const [id, s] of [
        ["a", 1],
        ["b", 2],
        ["c", 2],
        ["d", 3],
        ["e", 4],
      ] as const)
        await open(store.runs, id, "bot", at(s));
      await open(store.runs, "x", "other", at(5));
      const pages: string[][] = [];
      let after: RunPageKey | undefined;
      for (;;) {
        const page = await store.runs.listPage("bot", after, 2);
        if (page.length === 0) break;
        pages.push(page.map((r) => r.run_id));
        if (pages.length === 1) await open(store.runs, "z", "bot", at(9));
        const last = page[page.length - 1]!;
        after = { started_at: last.started_at, run_id: last.run_id };
      }
      assert.deepStrictEqual(pages, [["e", "d"], ["c", "b"], ["a"]], "a run opened after the first page does not shift the later ones");
      assert.deepStrictEqual(
        (await store.runs.listPage("bot", undefined, 500)).map((r) => r.run_id),
        ["z", "e", "d", "c", "b", "a"],
      );
      assert.deepStrictEqual(await store.runs.listPage("bot", { started_at: at(0), run_id: "" }, 10), []);
      assert.deepStrictEqual(await store.runs.listPage("nobody", undefined, 10), []);
      const page = await store.runs.listPage("bot", { started_at: at(2), run_id: "c" }, 10);
      assert.deepStrictEqual(
        page.map((r) => r.run_id),
        ["b", "a"],
      );
      assert.equal(page[0]?.intent, "do b");
    },
  },
];
