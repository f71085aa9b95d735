import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fakeEnv, output, scripted, spec } from "../../test/multi/agents.ts";
import { MULTI_EVENT_KINDS, runMapReduce } from "./index.ts";
import { TASK_HEAD_CHARS, taskRecord } from "./task-record.ts";

const sha256 = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");

describe("the agent_started record of a task and the agent_finished record of an answer", () => {
  it("records a reducer's huge task and each long answer by its head, UTF-8 length and digest, and hands the agent the whole task", async () => {
    const { options, events } = fakeEnv();
    // Eight mapped answers of 2 MiB each, multibyte: the reducer's task is ~16 MiB of text and more in UTF-8.
    const answer = "é€".repeat(1 << 20);
    const agent = scripted({ mapper: (_task, _ctx, s) => output(s.name, answer), reducer: (_task, _ctx, s) => output(s.name, "combined") });
    const items = Array.from({ length: 8 }, (_, i) => `item ${i}`);
    const result = await runMapReduce(spec("mapper"), spec("reducer"), "combine", items, agent, options);
    expect(result.reduce.error).toBeNull();

    const reducerTask = agent.calls.find((c) => c.name === "reducer")!.task;
    expect(reducerTask.length).toBeGreaterThan(16 * 2 ** 20);
    const started = events.query({ kinds: [MULTI_EVENT_KINDS.agentStarted] }).find((e) => e.data["agent"] === "reducer")!;
    expect(JSON.stringify(started.data).length).toBeLessThan(16 * 1024);
    expect(started.data["task"]).toBe(reducerTask.slice(0, TASK_HEAD_CHARS));
    expect(started.data["task_bytes"]).toBe(Buffer.byteLength(reducerTask, "utf8"));
    expect(started.data["task_sha256"]).toBe(sha256(reducerTask));
    // Each mapper's 2 MiB answer is recorded the same way in its agent_finished event; the result keeps it whole.
    const finished = events.query({ kinds: [MULTI_EVENT_KINDS.agentFinished] }).filter((e) => e.data["agent"] === "mapper");
    expect(finished).toHaveLength(8);
    for (const e of finished) {
      expect(JSON.stringify(e.data).length).toBeLessThan(16 * 1024);
      expect(e.data["answer"]).toBe(answer.slice(0, TASK_HEAD_CHARS));
      expect(e.data["answer_bytes"]).toBe(Buffer.byteLength(answer, "utf8"));
      expect(e.data["answer_sha256"]).toBe(sha256(answer));
    }
    expect(result.map.every((m) => m.answer === answer)).toBe(true);
    // A short answer is recorded whole, with no digest fields.
    const reduced = events.query({ kinds: [MULTI_EVENT_KINDS.agentFinished] }).find((e) => e.data["agent"] === "reducer")!;
    expect(reduced.data["answer"]).toBe("combined");
    expect(reduced.data["answer_bytes"]).toBeUndefined();
    // A mapper's short task is recorded whole, with no digest fields.
    const mapped = events.query({ kinds: [MULTI_EVENT_KINDS.agentStarted] }).find((e) => e.data["agent"] === "mapper")!;
    expect(mapped.data).toEqual({ agent: "mapper", step: "map 1", task: "combine\n\nItem 1 of 8:\nitem 0" });
  });

  it("digests any text a slice at a time exactly as it digests the whole, without splitting a surrogate pair", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: "binary", minLength: TASK_HEAD_CHARS + 1, maxLength: TASK_HEAD_CHARS + 64 }),
        fc.integer({ min: 1, max: 9 }),
        async (text, slice) => {
          const recorded = await taskRecord(text, slice);
          expect(recorded["task_sha256"]).toBe(sha256(text));
          expect(recorded["task_bytes"]).toBe(Buffer.byteLength(text, "utf8"));
          const head = recorded["task"] as string;
          expect(text.startsWith(head)).toBe(true);
          expect(head.length).toBeGreaterThanOrEqual(TASK_HEAD_CHARS - 1);
          expect(head.length).toBeLessThanOrEqual(TASK_HEAD_CHARS);
        },
      ),
      { numRuns: 50 },
    );
  });

  it("records a task of up to TASK_HEAD_CHARS characters whole", async () => {
    const text = "a".repeat(TASK_HEAD_CHARS);
    expect(await taskRecord(text)).toEqual({ task: text });
  });
});
